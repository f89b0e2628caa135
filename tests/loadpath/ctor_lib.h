// Interface of libloadpath_ctor.so: what its constructor saw when it used cudart before main().
#pragma once

struct CtorResults {
  bool ran = false;
  int count_rc = -1;
  int count = -1;
  int malloc_rc = -1;
  bool malloc_nonnull = false;
  int free_rc = -1;
  int roundtrip_rc = -1;
};

extern "C" __attribute__((visibility("default"))) const CtorResults* LoadpathCtorResults();

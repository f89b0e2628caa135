// A library named libmusart.so that is not a MUSA runtime (say, another vendor's library with a
// clashing name): the shim must refuse it.
extern "C" __attribute__((visibility("default"))) int mcclUnhandledMacaError() { return 0; }

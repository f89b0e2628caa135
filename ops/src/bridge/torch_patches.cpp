// PyTorch features whose CUDA side is NVIDIA code that no MUSA device can run, steered to what
// runs, with one Python warning each (run through run_python_soon, python.cpp, when the bridge
// installs). Each patch is applied once its PyTorch module has been imported (at once when it
// already is, else by an import hook: a meta path finder that patches the module after loading
// it and steps aside), so it never touches a half-imported torch.
//
// - torch.compile's default backend, inductor, turns graphs into Triton kernels (NVIDIA device
//   code: the first one fails to load). Its graphs run with aot_eager instead: the same graphs
//   (AOTAutograd's forward and backward) operator by operator, through the bridge where an
//   operator's kernel is NVIDIA code, with the results eager mode gives. torch.compile(model),
//   model.compile() and @torch.compile work as written; inductor's modes and options (CUDA
//   graphs, autotuning) have no effect. Where: torch._TorchCompileInductorWrapper.__call__, once
//   torch._dynamo is imported. TORCHADA_TORCH_COMPILE=inductor keeps inductor.
// - torch.profiler's CUDA activities are served by torchada's CUPTI (libtorchada.so's node
//   libcupti.so.13, shim/cupti/), which PyTorch's profiler binds to under the launcher and a bare
//   LD_PRELOAD alike. Only where the process's CUPTI is NVIDIA's (libtorchada.so loaded after
//   PyTorch, by dlopen) would it start: NVIDIA's CUPTI asks the driver for its private export
//   tables, meets the refusal and recurses until the stack overflows. There, and only there, the
//   profiler's CUDA activity is dropped with a warning, so torch.profiler.profile() profiles the
//   CPU side. Where: torch.autograd.profiler's _prepare_profiler and _enable_profiler, which every
//   profiler (torch.profiler, torch.autograd.profiler) calls with its activities.
// - Bridged random operators draw from the CPU default generator (host_exec.cpp): so that
//   torch.cuda.manual_seed(s) / manual_seed_all(s) make them reproducible whatever the CPU
//   generator's seed was (the same s included, which the C++ side cannot tell from
//   torch.manual_seed(s)), they re-seed it too. torch.manual_seed(s) calls manual_seed_all(s) and
//   then seeds the CPU generator itself: unchanged. Where: torch.cuda.random's and torch.cuda's
//   manual_seed and manual_seed_all. No warning: nothing is lost. Not when the random operators
//   run on the device (src/device/random.cpp): they draw from the CUDA generators themselves, and
//   CUDA seeding leaves the CPU generator alone, as in PyTorch.
// - cuDNN is NVIDIA's library: the bridge turns it off at installation, and a script that turns it
//   back on (torch.backends.cudnn.enabled = True, torch.backends.cudnn.flags(enabled=True)) would
//   meet cuDNN's CUDNN_STATUS_NOT_INITIALIZED at its first convolution. The request is answered
//   with one warning and cuDNN stays off: PyTorch's own convolution kernels run (through ops/'s
//   device kernels or the bridge), and torch.backends.cudnn.enabled reads False, which is true.
//   Where: torch._C._set_cudnn_enabled and the setter of torch.backends.cudnn's `enabled`.
// - torch.cuda.jiterator compiles the user's CUDA C++ with NVRTC into NVIDIA device code, which
//   the driver refuses ("CUDA driver error: ..."). The error is raised again saying so and what to
//   do instead. Where: torch.cuda.jiterator._JittedFunction.__call__.
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "bridge.h"

namespace torchada::ops::bridge {
namespace {

constexpr const char* kPatches = R"PY(
import importlib.abc
import importlib.util
import os
import sys
import warnings


def _torchada_after_import(name, patch):
    """Runs patch() once module `name` is imported (now, if it is)."""
    if name in sys.modules:
        patch()
        return

    class Hook(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path, target=None):
            if fullname != name:
                return None
            sys.meta_path.remove(self)
            spec = importlib.util.find_spec(fullname)
            if spec is None or spec.loader is None:
                return spec
            exec_module = spec.loader.exec_module

            def exec_and_patch(module):
                exec_module(module)
                patch()

            spec.loader.exec_module = exec_and_patch
            return spec

    sys.meta_path.insert(0, Hook())


def _torchada_warn_once(flag, text):
    if not flag:
        flag.append(True)
        warnings.warn("torchada: " + text, stacklevel=3)


def _torchada_use_aot_eager():
    wrapper = getattr(sys.modules.get("torch"), "_TorchCompileInductorWrapper", None)
    if wrapper is None or getattr(wrapper, "_torchada_aot_eager", False):
        return
    warned = []

    def __call__(self, model_, inputs_, **kwargs):
        _torchada_warn_once(warned, (
            "torch.compile's inductor backend generates Triton kernels (NVIDIA device code) that "
            "cannot run on MUSA; the graph runs with backend='aot_eager' instead (the same "
            "results; inductor's modes and options have no effect). "
            "TORCHADA_TORCH_COMPILE=inductor keeps inductor."))
        from torch._dynamo.backends.debugging import aot_eager
        return aot_eager(model_, inputs_)

    wrapper.__call__ = __call__
    wrapper._torchada_aot_eager = True


def _torchada_profile_cpu_only():
    profiler = sys.modules["torch.autograd.profiler"]
    if getattr(profiler, "_torchada_cpu_only", False):
        return
    from torch._C._profiler import ProfilerActivity
    warned = []

    def without_cuda(activities):
        if ProfilerActivity.CUDA not in activities:
            return activities
        _torchada_warn_once(warned, (
            "torch.profiler's CUDA activities would start NVIDIA's CUPTI, which cannot run on "
            "MUSA: libtorchada.so was loaded after PyTorch, so PyTorch's profiler is bound to "
            "NVIDIA's CUPTI and not torchada's. Profiling the CPU activities only (operators, "
            "shapes, memory, stacks); run under torchada-run or LD_PRELOAD=libtorchada.so for "
            "the device rows."))
        return type(activities)(a for a in activities if a != ProfilerActivity.CUDA)

    def wrap(f):
        def call(config, activities, *args, **kwargs):
            return f(config, without_cuda(activities), *args, **kwargs)
        return call

    profiler._prepare_profiler = wrap(profiler._prepare_profiler)
    profiler._enable_profiler = wrap(profiler._enable_profiler)
    profiler._torchada_cpu_only = True


def _torchada_cuda_seeds_reseed_the_bridge():
    import torch
    cuda_random = sys.modules["torch.cuda.random"]
    if getattr(cuda_random, "_torchada_reseeds", False):
        return

    def wrap(f):
        def seed_too(seed):
            f(seed)
            torch.default_generator.manual_seed(int(seed))
        seed_too.__doc__, seed_too.__name__ = f.__doc__, f.__name__
        return seed_too

    for name in ("manual_seed", "manual_seed_all"):
        wrapped = wrap(getattr(cuda_random, name))
        setattr(cuda_random, name, wrapped)
        cuda = sys.modules.get("torch.cuda")
        if cuda is not None and hasattr(cuda, name):
            setattr(cuda, name, wrapped)
    cuda_random._torchada_reseeds = True


def _torchada_keep_cudnn_off():
    import torch
    module = sys.modules["torch.backends.cudnn"]
    if getattr(torch._C, "_torchada_cudnn_off", False):
        return
    original = torch._C._set_cudnn_enabled
    warned = []

    def set_cudnn_enabled(enabled):
        if enabled:
            _torchada_warn_once(warned,
                "cuDNN is NVIDIA's library and cannot run on MUSA: it stays disabled "
                "(torch.backends.cudnn.enabled reads False) and PyTorch's own kernels run the "
                "convolutions, normalisations and RNNs it would have")
        original(False)

    torch._C._set_cudnn_enabled = set_cudnn_enabled
    prop = type(module).__dict__.get("enabled")
    if prop is not None and hasattr(prop, "setter"):
        prop.setter = set_cudnn_enabled
    torch._C._torchada_cudnn_off = True


def _torchada_explain_jiterator():
    jitted = getattr(sys.modules["torch.cuda.jiterator"], "_JittedFunction", None)
    if jitted is None or getattr(jitted, "_torchada_explained", False):
        return
    call = jitted.__call__

    def explained_call(self, *args, **kwargs):
        try:
            return call(self, *args, **kwargs)
        except RuntimeError as e:
            if "CUDA driver error" not in str(e):
                raise
            raise RuntimeError(
                "torchada: torch.cuda.jiterator compiles this function's CUDA C++ with NVRTC "
                "into NVIDIA device code, which cannot run on MUSA; write it with PyTorch "
                "operators (they run on the device or through the kernel bridge), or port it to "
                "MUSA (mcc) as an extension (" + str(e).splitlines()[0] + ")") from e

    jitted.__call__ = explained_call
    jitted._torchada_explained = True


if (os.environ.get("TORCHADA_TORCH_COMPILE") or "").lower() != "inductor":  # settings.h: any case
    _torchada_after_import("torch._dynamo", _torchada_use_aot_eager)
if not _TORCHADA_OWN_CUPTI:
    _torchada_after_import("torch.autograd.profiler", _torchada_profile_cpu_only)
_torchada_after_import("torch.backends.cudnn", _torchada_keep_cudnn_off)
_torchada_after_import("torch.cuda.jiterator", _torchada_explain_jiterator)
if not _TORCHADA_RANDOM_ON_DEVICE:
    _torchada_after_import("torch.cuda.random", _torchada_cuda_seeds_reseed_the_bridge)
)PY";

// Whether the process's CUPTI (what PyTorch's profiler binds to: the first definition in the
// global scope) is torchada's: libtorchada.so's node libcupti.so.13.
bool own_cupti() {
  void* f = dlsym(RTLD_DEFAULT, "cuptiActivityEnable");
  void* mine = dlsym(RTLD_DEFAULT, "torchada_activity_flag");
  Dl_info fi{}, mi{};
  return f != nullptr && mine != nullptr && dladdr(f, &fi) != 0 && dladdr(mine, &mi) != 0 &&
         fi.dli_fbase == mi.dli_fbase;
}

}  // namespace

void patch_torch_for_musa(bool random_on_device) {
  // Run once per process (the bridge installs once); the text must outlive the pending call.
  static const std::string code =
      std::string("_TORCHADA_RANDOM_ON_DEVICE = ") + (random_on_device ? "True\n" : "False\n") +
      "_TORCHADA_OWN_CUPTI = " + (own_cupti() ? "True\n" : "False\n") + kPatches;
  run_python_soon(code.c_str(), "torchada's PyTorch patches");
}

}  // namespace torchada::ops::bridge

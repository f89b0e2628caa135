// torch.compile's default backend under torchada.
//
// Inductor, torch.compile's default backend, turns graphs into Triton kernels: NVIDIA device code,
// which a MUSA device cannot run (the first one fails to load). The bridge hands inductor's graphs
// to aot_eager instead: the same graphs (AOTAutograd's forward and backward) run operator by
// operator, through the bridge where an operator's kernel is NVIDIA code, with the results eager
// mode gives. So `torch.compile(model)`, `model.compile()` and `@torch.compile` work as written;
// inductor's modes and options (CUDA graphs, autotuning) are inductor's own and have no effect.
// A Python warning says so once. TORCHADA_TORCH_COMPILE=inductor keeps inductor.
//
// Where: inductor's backend object, torch._TorchCompileInductorWrapper, whose __call__ compiles a
// graph. It is patched once torch._dynamo has been imported (torch.compile imports it before
// compiling anything, and torch is complete by then): at once when it already is, else by an
// import hook (a meta path finder that steps aside after that one import).
#include <cstdlib>
#include <cstring>

#include "bridge.h"

namespace torchada::ops::bridge {
namespace {

constexpr const char* kPatch = R"PY(
import importlib.abc
import importlib.util
import sys
import warnings


def _torchada_use_aot_eager():
    torch = sys.modules.get("torch")
    wrapper = getattr(torch, "_TorchCompileInductorWrapper", None)
    if wrapper is None or getattr(wrapper, "_torchada_aot_eager", False):
        return
    warned = []

    def __call__(self, model_, inputs_, **kwargs):
        if not warned:
            warned.append(True)
            warnings.warn(
                "torchada: torch.compile's inductor backend generates Triton kernels (NVIDIA "
                "device code) that cannot run on MUSA; the graph runs with backend='aot_eager' "
                "instead (the same results; inductor's modes and options have no effect). "
                "TORCHADA_TORCH_COMPILE=inductor keeps inductor.", stacklevel=2)
        from torch._dynamo.backends.debugging import aot_eager
        return aot_eager(model_, inputs_)

    wrapper.__call__ = __call__
    wrapper._torchada_aot_eager = True


class _TorchadaDynamoHook(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "torch._dynamo":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_and_patch(module):
            exec_module(module)
            _torchada_use_aot_eager()

        spec.loader.exec_module = exec_and_patch
        return spec


if "torch._dynamo" in sys.modules:
    _torchada_use_aot_eager()
else:
    sys.meta_path.insert(0, _TorchadaDynamoHook())
)PY";

}  // namespace

void route_compile_to_aot_eager() {
  const char* keep = std::getenv("TORCHADA_TORCH_COMPILE");
  if (keep != nullptr && std::strcmp(keep, "inductor") == 0) return;
  run_python_soon(kPatch, "torch.compile's aot_eager backend");
}

}  // namespace torchada::ops::bridge

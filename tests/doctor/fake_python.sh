#!/usr/bin/env bash
# A stand-in python3 with "PyTorch" installed that cannot initialise CUDA under torchada: the
# doctor must report the failure with its message, not crash or hang.
case $2 in
  *torch.cuda.init*)
    echo "Traceback (most recent call last):" >&2
    echo "RuntimeError: fake torch: no CUDA device under torchada (test stand-in)" >&2
    exit 1 ;;
  *)
    echo '{"version": "9.9.9+fake", "cuda": "13.0", "file": "/nowhere/torch/__init__.py", "python": "3.0.0"}' ;;
esac

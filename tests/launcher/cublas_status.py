"""Prints what cublasCreate_v2 answers through ctypes.CDLL(NAME_OR_PATH): `status N`.

    python3 cublas_status.py NAME_OR_PATH
"""
import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1])
lib.cublasCreate_v2.restype = ctypes.c_int
handle = ctypes.c_void_p()
print(f"status {lib.cublasCreate_v2(ctypes.byref(handle))}", flush=True)

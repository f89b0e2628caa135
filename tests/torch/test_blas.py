"""Matrix products whose CUDA implementation is cuBLAS/cuBLASLt alone, against the CPU."""
import re

import pytest

from conftest import check, run


# TF32 rounds inputs to 10 mantissa bits (the simulated muBLAS does, like NVIDIA's tensor cores).
@pytest.mark.parametrize("dtype,tf32,tol", [("float32", False, 1e-5), ("float32", True, 2e-3),
                                            ("float16", False, 2e-2), ("bfloat16", False, 5e-2)])
def test_mm_bmm_linear(mode, dtype, tf32, tol):
    check(run(mode, f"""
        import torch
        torch.backends.cuda.matmul.allow_tf32 = {tf32}
        dt = torch.{dtype}
        g = torch.Generator().manual_seed(1)
        a, b = torch.randn(37, 53, generator=g), torch.randn(53, 29, generator=g)
        x, w = torch.randn(4, 11, 53, generator=g), torch.randn(29, 53, generator=g)
        p, q = torch.randn(6, 17, 23, generator=g), torch.randn(6, 23, 19, generator=g)
        def close(dev, ref):
            ref = ref.to(dt).float()
            err = (dev.cpu().float() - ref).abs().max().item()
            scale = ref.abs().max().item()
            assert err <= {tol} * max(scale, 1.0), (err, scale)
        close(torch.mm(a.to(dt).cuda(), b.to(dt).cuda()), a.to(dt).float() @ b.to(dt).float())
        close(torch.bmm(p.to(dt).cuda(), q.to(dt).cuda()), torch.bmm(p.to(dt).float(), q.to(dt).float()))
        close(torch.nn.functional.linear(x.to(dt).cuda(), w.to(dt).cuda()),
              torch.nn.functional.linear(x.to(dt).float(), w.to(dt).float()))
        print("OK")
    """))


# linear with a bias is addmm, which PyTorch runs through cuBLASLt (cublasLtMatmul with a BIAS
# epilogue) handing it its cuBLAS handle cast to cublasLtHandle_t: the shim resolves that handle
# (shim/cublasLt/handles.cc), so the product is muBLASLt's, not the kernel bridge's host fallback.
@pytest.mark.parametrize("dtype,tol", [("float32", 1e-5), ("float16", 2e-2), ("bfloat16", 5e-2)])
def test_linear_with_bias_reaches_cublaslt(mode, dtype, tol):
    p = check(run(mode, f"""
        import torch
        import torch.nn.functional as F
        torch.backends.cuda.matmul.allow_tf32 = False
        dt = torch.{dtype}
        g = torch.Generator().manual_seed(2)
        w, b = torch.randn(29, 53, generator=g), torch.randn(29, generator=g)
        for x in (torch.randn(37, 53, generator=g), torch.randn(4, 11, 53, generator=g)):
            dev = F.linear(x.to(dt).cuda(), w.to(dt).cuda(), b.to(dt).cuda()).cpu().float()
            ref = F.linear(x.to(dt).float(), w.to(dt).float(), b.to(dt).float()).to(dt).float()
            err = (dev - ref).abs().max().item()
            scale = ref.abs().max().item()
            assert err <= {tol} * max(scale, 1.0), (err, scale)
        report = getattr(torch.ops.torchada, "bridge_report", None) if hasattr(torch.ops, "torchada") else None
        if report is not None:  # the kernel bridge is loaded: addmm was PyTorch's own, natively
            ops, paths, calls, _ = report()
            rows = {{(o, p): c for o, p, c in zip(ops, paths, calls)}}
            assert rows.get(("aten::addmm", "native"), 0) >= 2, rows
            assert not any(o == "aten::addmm" and p != "native" for o, p in rows), rows
        print("OK")
    """, env={"TORCHADA_STATS": "1"}))
    assert "OK" in p.stdout
    stats = {}
    for line in p.stderr.splitlines():
        m = re.search(r"\]\s+(cublasLt\w+)\s+(\d+)\s+(\d+)\s", line)
        if m:
            stats[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    for fn in ("cublasLtMatmulAlgoGetHeuristic", "cublasLtMatmul"):
        assert fn in stats, (fn, p.stderr[-4000:])
        calls, errors = stats[fn]
        assert calls >= 2 and errors == 0, (fn, calls, errors, p.stderr[-4000:])
    assert "was not made by cublasLtCreate nor by cublasCreate" not in p.stderr


# torch._scaled_mm (FP8 GEMMs) through cublasLtMatmul's FP8 scaling, computed by the simulated
# muBLASLt. PyTorch allows it from compute capability 8.9 (tensorwise) / 9.0 (rowwise through
# cuBLASLt's outer-vector scales; 8.9 takes a CUTLASS kernel): the simulator is an mp_22 (8.0), so
# the case reports 9.0, the capability of MUSA's FP8 architecture (mp_31). Inputs are multiples of
# 1/4 quantized on the CPU, scales powers of two: every sum is exact in fp32, so D equals the CPU
# reference (decoded by PyTorch's CPU FP8 conversion, computed in float64) bit for bit; FP8 outputs
# saturate in cuBLASLt, so the reference clamps before the CPU's (overflow-to-NaN) conversion.
def test_scaled_mm_fp8(mode):
    p = check(run(mode, """
        import torch
        assert torch.cuda.get_device_capability() == (9, 0)
        g = torch.Generator().manual_seed(3)
        M, K, N = 32, 64, 48
        def grid(*shape):
            return torch.randint(-8, 9, shape, generator=g).float() / 4
        def pow2(*shape):
            return 2.0 ** torch.randint(-2, 3, shape, generator=g).float()
        def check(got, ref, out_dtype):
            if out_dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
                big = torch.finfo(out_dtype).max
                ref = ref.clamp(-big, big)
            want = ref.to(out_dtype).float()
            assert torch.equal(got.cpu().float(), want), (got.cpu().float() - want).abs().max()
        A, B = grid(M, K), grid(N, K)
        for a_dt, b_dt in [(torch.float8_e4m3fn, torch.float8_e4m3fn),
                           (torch.float8_e4m3fn, torch.float8_e5m2),
                           (torch.float8_e5m2, torch.float8_e4m3fn)]:
            a8, b8 = A.to(a_dt), B.to(b_dt)
            a, b = a8.cuda(), b8.cuda().t()  # PyTorch's layout: row-major A, column-major B
            prod = a8.double() @ b8.double().t()
            for out_dtype, bias, scale_result, fast in [
                    (torch.bfloat16, None, None, False),
                    (torch.float32, None, None, False),  # PyTorch: no bias with fp32 out
                    (torch.float16, grid(N).half(), None, True),
                    (torch.bfloat16, grid(N).bfloat16(), None, True),
                    (torch.float8_e4m3fn, None, 8.0, False)]:
                sa, sb = pow2(), pow2()
                kw = dict(out_dtype=out_dtype, use_fast_accum=fast)
                if bias is not None:
                    kw["bias"] = bias.cuda()
                if scale_result is not None:
                    kw["scale_result"] = torch.tensor(scale_result).cuda()
                out = torch._scaled_mm(a, b, sa.cuda(), sb.cuda(), **kw)
                ref = prod * sa.double() * sb.double()
                if bias is not None:
                    ref = ref + bias.double()
                if scale_result is not None:
                    ref = ref * scale_result
                check(out, ref, out_dtype)
            # Rowwise: a scale per row of A and per column of B (cuBLASLt's OUTER_VEC_32F).
            sa, sb = pow2(M, 1), pow2(1, N)
            out = torch._scaled_mm(a, b, sa.cuda(), sb.cuda(), out_dtype=torch.bfloat16)
            check(out, prod * sa.double() * sb.double(), torch.bfloat16)
        # Saturation: every output of a large D scale clamps at +-448.
        ones_a = torch.ones(M, K).to(torch.float8_e4m3fn).cuda()
        ones_b = torch.ones(N, K).to(torch.float8_e4m3fn).cuda().t()
        one = torch.tensor(1.0).cuda()
        out = torch._scaled_mm(ones_a, ones_b, one, one, scale_result=torch.tensor(64.0).cuda(),
                               out_dtype=torch.float8_e4m3fn)  # 64 * 64 = 4096
        assert torch.equal(out.cpu().float(), torch.full((M, N), 448.0)), out.cpu().float().unique()
        print("OK")
    """, env={"TORCHADA_REPORT_CC": "9.0", "TORCHADA_STATS": "1"}))
    assert "OK" in p.stdout
    stats = {}
    for line in p.stderr.splitlines():
        m = re.search(r"\]\s+(cublasLt\w+)\s+(\d+)\s+(\d+)\s", line)
        if m:
            stats[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    calls, errors = stats.get("cublasLtMatmul", (0, 0))
    assert calls >= 19 and errors == 0, (calls, errors, p.stderr[-4000:])


# Blockwise _scaled_mm (the DeepSeek recipe: 1 x 128 scales of activations, 128 x 128 of
# weights; 1 x 128 on both; 128 x 128 activations with 1 x 128 weights) on a simulated MTT S5000 (TORCHADA_SIM_ARCH=mp_31, MUSA's FP8
# architecture), whose compute capability 3.1 CUDA code sees as 9.0, the capability PyTorch takes
# these recipes to cuBLASLt at: no TORCHADA_REPORT_CC. The scale tensors in the layouts PyTorch
# demands (1 x 128: M-major; 128 x 128: (K/128, N/128), K-block major) reach cublasLtMatmul as
# VEC128_32F / BLK128x128_32F. Exact inputs and scales: D equals the float64 reference rounded to
# bf16, bit for bit; K = 384 gives three K blocks, N = 256 two weight blocks.
def test_scaled_mm_blockwise(mode):
    p = check(run(mode, """
        import torch
        assert torch.cuda.get_device_capability() == (9, 0), torch.cuda.get_device_capability()
        assert torch.cuda.get_device_name() == "MTT S5000", torch.cuda.get_device_name()
        g = torch.Generator().manual_seed(7)
        M, K, N = 128, 384, 256
        A = (torch.randint(-8, 9, (M, K), generator=g).float() / 8).to(torch.float8_e4m3fn)
        B = (torch.randint(-8, 9, (N, K), generator=g).float() / 8).to(torch.float8_e4m3fn)
        def factors(*shape):
            return torch.tensor([0.5, 0.75, 1.0, 1.25, 1.5, 2.0])[
                torch.randint(0, 6, shape, generator=g)]
        def expand(s, rows):  # per-element factors of an (outer, K) operand
            return s.double().repeat_interleave(rows, 0).repeat_interleave(128, 1)
        a, b = A.cuda(), B.cuda().t()
        sa = factors(M, K // 128)
        sa_dev = sa.cuda().t().contiguous().t()  # M-major, as PyTorch requires
        for name, sb, rows in [("1x128 x 128x128", factors(N // 128, K // 128), 128),
                               ("1x128 x 1x128", factors(N, K // 128), 1)]:
            sb_dev = sb.cuda().t() if rows == 128 else sb.cuda().t().contiguous()
            out = torch._scaled_mm(a, b, sa_dev, sb_dev, out_dtype=torch.bfloat16)
            ref = (A.double() * expand(sa, 1)) @ (B.double() * expand(sb, rows)).t()
            want = ref.to(torch.bfloat16).float()
            assert torch.equal(out.cpu().float(), want), (name, (out.cpu().float() - want).abs().max())
        # 128 x 128 activation blocks with 1 x 128 weight scales: scale_a (M/128, K/128) contiguous.
        M2 = 256
        A2 = (torch.randint(-8, 9, (M2, K), generator=g).float() / 8).to(torch.float8_e4m3fn)
        sa2, sb2 = factors(M2 // 128, K // 128), factors(N, K // 128)
        out = torch._scaled_mm(A2.cuda(), b, sa2.cuda(), sb2.cuda().t().contiguous(),
                               out_dtype=torch.bfloat16)
        ref = (A2.double() * expand(sa2, 128)) @ (B.double() * expand(sb2, 1)).t()
        want = ref.to(torch.bfloat16).float()
        assert torch.equal(out.cpu().float(), want), (out.cpu().float() - want).abs().max()
        print("OK")
    """, env={"TORCHADA_SIM_ARCH": "mp_31", "TORCHADA_STATS": "1"}))
    assert "OK" in p.stdout
    assert re.search(r"\]\s+cublasLtMatmul\s+3\s+0\s", p.stderr), p.stderr[-4000:]


# MXFP8: _scaled_mm with float8_e8m0fnu block scales (one per 32 K elements, in cuBLAS's tiles of
# 128 x 4 factors, built as PyTorch's to_blocked() does) reaches cublasLtMatmul with the
# VEC32_UE8M0 scale modes. PyTorch takes it only on compute capability 10.0. Two row tiles, K
# blocks padded to 4; exact inputs and power-of-two factors: bit for bit.
def test_scaled_mm_mxfp8(mode):
    p = check(run(mode, """
        import torch
        def to_blocked(x):
            rows, cols = x.shape
            nrb, ncb = -(-rows // 128), -(-cols // 4)
            padded = torch.zeros(nrb * 128, ncb * 4, dtype=x.dtype)
            padded[:rows, :cols] = x
            blocks = padded.view(nrb, 128, ncb, 4).permute(0, 2, 1, 3)
            return blocks.reshape(-1, 4, 32, 4).transpose(1, 2).reshape(-1, 32, 16).flatten()
        g = torch.Generator().manual_seed(5)
        M, K, N = 144, 96, 48
        A = (torch.randint(-8, 9, (M, K), generator=g).float() / 4).to(torch.float8_e4m3fn)
        B = (torch.randint(-8, 9, (N, K), generator=g).float() / 4).to(torch.float8_e4m3fn)
        ea = torch.randint(126, 129, (M, K // 32), generator=g).to(torch.uint8)
        eb = torch.randint(126, 129, (N, K // 32), generator=g).to(torch.uint8)
        sa = to_blocked(ea).view(torch.float8_e8m0fnu).cuda()
        sb = to_blocked(eb).view(torch.float8_e8m0fnu).cuda()
        out = torch._scaled_mm(A.cuda(), B.cuda().t(), sa, sb, out_dtype=torch.bfloat16)
        fa = torch.pow(2.0, ea.double() - 127).repeat_interleave(32, dim=1)
        fb = torch.pow(2.0, eb.double() - 127).repeat_interleave(32, dim=1)
        ref = ((A.double() * fa) @ (B.double() * fb).t()).to(torch.bfloat16).float()
        assert torch.equal(out.cpu().float(), ref), (out.cpu().float() - ref).abs().max()
        print("OK")
    """, env={"TORCHADA_REPORT_CC": "10.0", "TORCHADA_STATS": "1"}))
    assert "OK" in p.stdout
    assert re.search(r"\]\s+cublasLtMatmul\s+1\s+0\s", p.stderr), p.stderr[-4000:]

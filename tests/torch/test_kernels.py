"""What needs an NVIDIA kernel fails cleanly, naming the kernel (the kernel bridge is off here)."""
from conftest import check, run


def test_fill_kernel_is_refused_by_name(mode):
    p = check(run(mode, """
        import torch
        try:
            torch.full((8,), 3.0, device="cuda")
        except RuntimeError as e:
            msg = str(e)
            assert "no kernel image" in msg.lower() or "kernel" in msg.lower(), msg
            print("REFUSED", msg.splitlines()[0])
        else:
            raise SystemExit("torch.zeros on cuda ran an NVIDIA kernel")
    """, env={"TORCHADA_KERNEL_BRIDGE": "off"}))
    assert "REFUSED" in p.stdout
    assert "kernel" in p.stderr.lower(), p.stderr[-3000:]

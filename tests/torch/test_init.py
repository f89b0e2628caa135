"""import torch, CUDA initialisation and device properties under torchada."""
from conftest import check, run


def test_import_and_initialise(mode):
    p = check(run(mode, """
        import torch
        assert torch.cuda.is_available()
        assert torch.cuda.device_count() == 1, torch.cuda.device_count()
        torch.cuda.init()
        props = torch.cuda.get_device_properties(0)
        assert props.total_memory > (1 << 30), props.total_memory
        assert props.multi_processor_count > 0
        assert torch.cuda.get_device_capability(0) == (8, 0), torch.cuda.get_device_capability(0)
        assert torch.cuda.current_device() == 0
        print("NAME", props.name)
        print("VERSION", torch.version.cuda)
    """))
    assert "NAME " in p.stdout and p.stdout.split("NAME ")[1].strip(), p.stdout


def test_capability_policy_and_device_count(mode):
    check(run(mode, """
        import torch
        assert torch.cuda.device_count() == 3, torch.cuda.device_count()
        for d in range(3):
            assert torch.cuda.get_device_capability(d) == (9, 0), torch.cuda.get_device_capability(d)
        torch.cuda.set_device(2)
        assert torch.cuda.current_device() == 2
    """, env={"TORCHADA_SIM_DEVICES": "3", "TORCHADA_REPORT_CC": "9.0"}))


def test_stats_table_names_libraries(mode):
    p = check(run(mode, """
        import torch
        torch.cuda.init()
        x = torch.empty(16, device="cuda")
        del x
    """, env={"TORCHADA_STATS": "1"}))
    # The per-function table at exit names runtime and driver calls PyTorch made.
    assert "cudaGetDeviceCount" in p.stderr, p.stderr[-3000:]

#!/usr/bin/env python3
# scripts/dualpipe_reference_order.py: runs deepseek-ai/DualPipe's own step() control flow
# (dualpipe.py, dualpipev.py) with torch stubbed and the compute and communication methods
# replaced by loggers, and prints each rank's order as tests/unit/test_dualpipe.c spells it
# ("F3.1" forward of micro-batch 3 on part 1, B/W split backward, BW whole, "&" a backward run
# in overlapped_forward_backward with the forward before it). DualPipe's micro-batches are
# numbered as the simulator does: the first N/2 enter at rank 0 (part 0), the rest at the last.
# Usage: scripts/dualpipe_reference_order.py DUALPIPE_SRC_DIR dualpipe|dualpipev RANKS CHUNKS
#   (DUALPIPE_SRC_DIR holds dualpipe.py and dualpipev.py of github.com/deepseek-ai/DualPipe)
import sys, types
SRC = sys.argv.pop(1)
torch = types.ModuleType('torch'); nn = types.ModuleType('torch.nn'); dist = types.ModuleType('torch.distributed')
class Module: pass
nn.Module = Module; nn.ModuleList = list
torch.nn = nn; torch.distributed = dist; torch.Tensor = object; dist.ProcessGroup = object; dist.P2POp = object
torch.is_grad_enabled = lambda: True; torch.stack = lambda x: None
sys.modules.update({'torch': torch, 'torch.nn': nn, 'torch.distributed': dist})
comm = types.ModuleType('dualpipe.comm'); comm.TENSOR_SHAPES = 1; comm.TENSOR_DTYPE = 1
utils = types.ModuleType('dualpipe.utils')
class WGS:
    q = []
    enabled = False
    funcs_queue = types.SimpleNamespace(empty=lambda: len(WGS.q) == 0)
    @staticmethod
    def clear(): WGS.q.clear()
utils.WeightGradStore = WGS; utils.run_backward = None
utils.scatter = lambda x, n, d: [None] * n; utils.gather = None
pkg = types.ModuleType('dualpipe'); pkg.__path__ = []
sys.modules.update({'dualpipe': pkg, 'dualpipe.comm': comm, 'dualpipe.utils': utils})
import importlib.util
def load(name):
    spec = importlib.util.spec_from_file_location('dualpipe.' + name, f'{SRC}/{name}.py')
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); return m

def run(kind, D, N):
    mod = load(kind)
    cls = mod.DualPipe if kind == 'dualpipe' else mod.DualPipeV
    for rank in range(D):
        o = object.__new__(cls)
        o.rank, o.num_ranks = rank, D
        o.is_first_rank, o.is_last_rank = rank == 0, rank == D - 1
        o.is_in_second_half = rank >= D // 2
        o.is_middle_rank = rank in (D // 2 - 1, D // 2)
        o.group = None; o.batch_dim = 0; o.loss_chunks = []
        log = []
        f = [0, 0]; b = [0, 0]
        def part(phase):
            return phase ^ o.is_in_second_half if kind == 'dualpipe' else phase
        def mb(p, k):
            return (p * (N // 2) + k) if kind == 'dualpipe' else k
        def fwd(phase):
            p = part(phase); log.append(f'F{mb(p, f[p])}.{p}'); f[p] += 1
        def bwd(phase, zb, pair=''):
            p = part(phase); m = mb(p, b[p]); b[p] += 1
            if zb: log.append(f'B{m}.{p}{pair}'); WGS.q.append(f'W{m}.{p}')
            else: log.append(f'BW{m}.{p}{pair}')
        o._reset_states = lambda: WGS.clear()
        o._forward_chunk = lambda phase, recv=True, send=True: fwd(phase)
        o._backward_chunk = lambda phase, enable_zb=False, recv=True, send=True: bwd(phase, enable_zb)
        def fb(phase0, phase1, recv0=True):
            fwd(phase0); bwd(phase1, False, '&')
        o._forward_backward_chunk = fb
        o._weight_chunk = lambda: log.append(WGS.q.pop(0))
        for n in ('_recv_forward', '_send_forward', '_recv_backward', '_send_backward'):
            setattr(o, n, lambda *a, **k: None)
        o._commit_and_wait_comm = lambda: None
        o.step(None, num_chunks=N, criterion=lambda *a: None, labels=[])
        print(rank, ' '.join(log))
run(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))

# Does HBM streaming slow down under sustained load? Times a 1 GiB device copy and a decode-shaped
# GEMM (1 x 4096 · 4096 x 14336, bf16, weights rotated over 8 copies: 940 MB) back to back for
# 12 s, in windows of 0.25 s, CUDA events per iteration; reports the median per window.
import json, sys, time, torch
dev = torch.device("cuda")
src = torch.empty(1 << 28, dtype=torch.float32, device=dev).uniform_()
dst = torch.empty_like(src)
ws = [torch.randn(4096, 14336, dtype=torch.bfloat16, device=dev) for _ in range(8)]
x = torch.randn(1, 4096, dtype=torch.bfloat16, device=dev)
def run(kind, seconds):
    out = []
    t_end = time.time() + seconds
    i = 0
    while time.time() < t_end:
        evs = []
        w0 = time.time()
        while time.time() - w0 < 0.25:
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            if kind == "copy":
                dst.copy_(src)
            else:
                for k in range(8):
                    torch.matmul(x, ws[(i + k) % 8])
            b.record()
            evs.append((a, b))
            i += 1
        torch.cuda.synchronize()
        ts = sorted(a.elapsed_time(b) for a, b in evs)
        med = ts[len(ts) // 2] / 1e3
        nbytes = 2 * src.numel() * 4 if kind == "copy" else 8 * ws[0].numel() * 2
        out.append(round(nbytes / med / 1e9, 1))
    return out
torch.cuda.synchronize(); time.sleep(2.0)  # idle first
res = {"copy_GBps_per_0.25s": run("copy", 12)}
time.sleep(3.0)
res["gemv_GBps_per_0.25s"] = run("gemv", 12)
print(json.dumps(res))
json.dump(res, open(sys.argv[1], "w"))

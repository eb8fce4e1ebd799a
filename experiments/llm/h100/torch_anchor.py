"""torch_anchor -- PyTorch's own fp16 kernels on the shapes servesim-calibrate's decoder GPU
runtime measures for Llama-3-8B (experiments/llm/h100/README.md): the four GEMMs of a layer
(cuBLAS through torch.matmul) and attention (F.scaled_dot_product_attention: FlashAttention /
cuDNN / memory-efficient, whichever torch picks), timed with CUDA events, median of 30 after 10
warm-up runs. An outside reference for the runtime's cuBLASLt GEMMs and its own attention
kernels; the runtime's numbers are in the profile's "operators" and per-layer tables.

    python3 torch_anchor.py [OUT.json]
"""
import json
import statistics
import sys

import torch
import torch.nn.functional as F

H, NQ, NKV, HD, I = 4096, 32, 8, 128, 14336
dev = torch.device("cuda")
torch.manual_seed(0)


def timed(fn, reps=30, warm=10):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) * 1e3)
    return statistics.median(ts)


out = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
       "cudnn": torch.backends.cudnn.version(), "gemm": {}, "prefill_attention": {},
       "decode_attention": {}}
shapes = {"qkv": ((NQ + 2 * NKV) * HD, H), "out": (H, NQ * HD), "gate_up": (2 * I, H),
          "down": (H, I)}
W = {k: torch.randn(n, kk, device=dev, dtype=torch.float16) * 0.02 for k, (n, kk) in shapes.items()}
print("GEMMs (torch.matmul, fp16): T, per-layer us of qkv+out+gate_up+down, TFLOP/s")
for T in (1, 32, 256, 512, 1024, 2048):
    X = {k: torch.randn(T, kk, device=dev, dtype=torch.float16) for k, (n, kk) in shapes.items()}
    us = {k: timed(lambda k=k: torch.matmul(X[k], W[k].t())) for k in shapes}
    tot = sum(us.values())
    flop = 2 * T * sum(n * kk for n, kk in shapes.values())
    out["gemm"][T] = {"us": us, "sum_us": tot, "tflops": flop / tot / 1e6}
    print(f"{T:6d} {tot:10.1f} {flop / tot / 1e6:8.1f}")

print("prefill attention (SDPA, causal over the chunk, after a context): chunk, context, us a layer")
for q, c in ((128, 0), (512, 0), (512, 1024), (512, 2048)):
    Q = torch.randn(1, NQ, q, HD, device=dev, dtype=torch.float16)
    K = torch.randn(1, NKV, c + q, HD, device=dev, dtype=torch.float16)
    V = torch.randn_like(K)
    # the chunk's rows see the whole context and the chunk causally: an explicit mask
    mask = torch.ones(q, c + q, device=dev, dtype=torch.bool).tril(diagonal=c)
    us = timed(lambda: F.scaled_dot_product_attention(Q, K, V, attn_mask=mask, enable_gqa=True))
    us_c = timed(lambda: F.scaled_dot_product_attention(Q, K, V, is_causal=(c == 0), enable_gqa=True))
    out["prefill_attention"][f"{q}@{c}"] = {"masked_us": us, "flash_us": us_c}
    print(f"{q:6d} {c:6d} {us:10.1f} (no mask{' , causal' if c == 0 else ''}: {us_c:.1f})")

print("decode attention (SDPA, one query a sequence, contiguous cache): seqs, context each, us a layer")
for B, ctx in ((1, 1024), (32, 32), (32, 1024), (256, 128)):
    Q = torch.randn(B, NQ, 1, HD, device=dev, dtype=torch.float16)
    K = torch.randn(B, NKV, ctx, HD, device=dev, dtype=torch.float16)
    V = torch.randn_like(K)
    us = timed(lambda: F.scaled_dot_product_attention(Q, K, V, enable_gqa=True))
    out["decode_attention"][f"{B}x{ctx}"] = us
    print(f"{B:6d} {ctx:6d} {us:10.1f}")
if len(sys.argv) > 1:
    json.dump(out, open(sys.argv[1], "w"), indent=1)

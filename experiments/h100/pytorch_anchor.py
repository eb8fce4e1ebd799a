# pytorch_anchor.py — the outside reference of scripts/gpu-check.sh (experiments/h100/README.md):
# run on a GPU machine with PyTorch and torchvision, `python3 pytorch_anchor.py`; the H100 run of
# 2026-11-26 wrote pytorch_anchor.json beside it.
# Anchor: PyTorch on the same six networks, fp16, NHWC: eager back to back, CUDA-graph replay
# back to back, and CUDA-graph replay with idle gaps (device busy about half the time), per
# batch size. Median and p99 of CUDA-event times. Writes anchor.json.
import json, random, time, torch, torchvision
torch.backends.cudnn.benchmark = True
random.seed(1)
dev = "cuda"
def bert():
    from transformers import BertConfig, BertModel
    return BertModel(BertConfig())
nets = {"resnet50": lambda: torchvision.models.resnet50(),
        "bert_base": bert,
        "mobilenetv2": lambda: torchvision.models.mobilenet_v2(),
        "vgg16": lambda: torchvision.models.vgg16(),
        "inceptionv3": lambda: torchvision.models.inception_v3(aux_logits=True, init_weights=False),
        "densenet121": lambda: torchvision.models.densenet121()}
def stats(ts):
    ts = sorted(ts); return {"median": ts[len(ts)//2], "p99": ts[int(0.99*(len(ts)-1))], "min": ts[0]}
def timed(fn, n, gap_ms=None):
    ts = []
    for _ in range(n):
        if gap_ms: time.sleep(random.expovariate(1.0/gap_ms)/1000.0)
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); e.synchronize(); ts.append(s.elapsed_time(e))
    return ts
out = {"torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
       "device": torch.cuda.get_device_name(0), "nets": {}}
for name, ctor in nets.items():
    t0 = time.time()
    m = ctor().eval().to(dev).half()
    bert_net = name == "bert_base"
    if not bert_net: m = m.to(memory_format=torch.channels_last)
    res = {}
    for b in (1, 2, 4, 8, 16, 32):
        if bert_net:
            x = torch.randint(0, 30000, (b, 128), device=dev)
        else:
            side = 299 if name == "inceptionv3" else 224
            x = torch.randn(b, 3, side, side, device=dev).half().to(memory_format=torch.channels_last)
        with torch.inference_mode():
            f = lambda: m(x)
            for _ in range(10): f()
            torch.cuda.synchronize()
            eager = timed(f, 60)
            s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(3): f()
            torch.cuda.current_stream().wait_stream(s); torch.cuda.synchronize()
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g): y = f()
            for _ in range(10): g.replay()
            torch.cuda.synchronize()
            graph = timed(g.replay, 150)
            med = stats(graph)["median"]
            gapped = timed(g.replay, 100, gap_ms=med)
        res[b] = {"eager": stats(eager), "graph": stats(graph), "graph_gaps": stats(gapped)}
        del g
    out["nets"][name] = res
    print(name, f"{time.time()-t0:.1f}s", " ".join(
        f"b{b}: eager {r['eager']['median']:.3f} graph {r['graph']['median']:.3f} gaps {r['graph_gaps']['median']:.3f}"
        for b, r in res.items()), flush=True)
    json.dump(out, open("anchor.json", "w"), indent=1)
    del m; torch.cuda.empty_cache()

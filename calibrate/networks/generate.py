#!/usr/bin/env python3
"""generate.py — writes the network definitions of calibrate/networks/*.json.

The JSON files are the data servesim-calibrate reads (format "servesim-net/1", documented in
docs/calibrate.md): one layer per line, each with its true shape attributes. Architectures
with hundreds of layers (DenseNet-121 has 120 convolutions) are written by this script from
the papers' block structure, following torchvision / Hugging Face layer for layer, so that
parameter counts match the published figures exactly. Edit this script, not the JSON, and
re-run it:  python3 calibrate/networks/generate.py
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


class Net:
    def __init__(self, name, source, input_shape, published):
        self.name, self.source, self.input, self.published = name, source, input_shape, published
        self.layers, self.last, self.names = [], "input", set()

    def add(self, name, op, inputs=None, **attrs):
        assert name not in self.names, name
        self.names.add(name)
        layer = {"name": name, "op": op}
        if inputs is not None:
            inputs = [inputs] if isinstance(inputs, str) else inputs
            if inputs != [self.last]:
                layer["in"] = inputs
        elif self.last is None:
            raise ValueError(name)
        layer.update(attrs)
        self.layers.append(layer)
        self.last = name
        return name

    def conv(self, name, out, k, s=1, p=0, x=None, g=1, d=1, bias=False):
        attrs = {"out": out}
        if isinstance(k, tuple):
            attrs["kh"], attrs["kw"] = k
        else:
            attrs["k"] = k
        if s != 1:
            attrs["s"] = s
        if isinstance(p, tuple):
            attrs["ph"], attrs["pw"] = p
        elif p:
            attrs["p"] = p
        if g != 1:
            attrs["g"] = g
        if d != 1:
            attrs["d"] = d
        if bias:
            attrs["bias"] = True
        return self.add(name, "conv", x if x is not None else self.last, **attrs)

    def write(self, fname):
        path = os.path.join(HERE, fname)
        with open(path, "w") as f:
            f.write("{\n")
            f.write(' "format": "servesim-net/1",\n')
            f.write(' "name": %s,\n' % json.dumps(self.name))
            f.write(' "source": %s,\n' % json.dumps(self.source))
            f.write(' "generated_by": "calibrate/networks/generate.py",\n')
            f.write(' "published": %s,\n' % json.dumps(self.published))
            f.write(' "input": %s,\n' % json.dumps(self.input))
            f.write(' "layers": [\n')
            f.write(",\n".join("  " + json.dumps(l) for l in self.layers))
            f.write("\n ]\n}\n")


def conv_bn_relu(n, name, out, k, s=1, p=0, x=None, eps=None, act="relu", g=1):
    n.conv(name, out, k, s, p, x, g=g)
    if eps is None:
        n.add(name + "_bn", "bn")
    else:
        n.add(name + "_bn", "bn", eps=eps)
    if act:
        n.add(name + "_" + act, act)
    return n.last


def resnet50():
    n = Net("ResNet-50", "He et al., CVPR 2016 (v1.5 as in torchvision: stride on the 3x3)",
            {"shape": [3, 224, 224]},
            {"params": 25557032, "gmacs": 4.09,
             "ref": "torchvision resnet50 IMAGENET1K_V1: 25,557,032 params, 4.09 GFLOPS (MACs)"})
    conv_bn_relu(n, "conv1", 64, 7, 2, 3)
    n.add("pool1", "maxpool", k=3, s=2, p=1)
    x, cin = n.last, 64
    for si, (w, blocks, stride) in enumerate([(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)]):
        for b in range(blocks):
            s = stride if b == 0 else 1
            pre = "l%d_%d" % (si + 1, b)
            conv_bn_relu(n, pre + "_c1", w, 1, x=x)
            conv_bn_relu(n, pre + "_c2", w, 3, s, 1)
            conv_bn_relu(n, pre + "_c3", 4 * w, 1, act=None)
            main = n.last
            short = x
            if b == 0:
                short = conv_bn_relu(n, pre + "_down", 4 * w, 1, s, x=x, act=None)
            n.add(pre + "_add", "add", [main, short])
            x = n.add(pre + "_relu", "relu")
            cin = 4 * w
    n.add("gap", "gap")
    n.add("fc", "fc", out=1000)
    n.add("prob", "softmax")
    return n


def vgg16():
    n = Net("VGG-16", "Simonyan & Zisserman, ICLR 2015 (configuration D, as torchvision vgg16)",
            {"shape": [3, 224, 224]},
            {"params": 138357544, "gmacs": 15.47,
             "ref": "torchvision vgg16 IMAGENET1K_V1: 138,357,544 params, 15.47 GFLOPS (MACs)"})
    cfg = [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"]
    i = 0
    for v in cfg:
        if v == "M":
            n.add("pool%d" % i, "maxpool", k=2, s=2)
        else:
            i += 1
            n.conv("conv%d" % i, v, 3, 1, 1, bias=True)
            n.add("relu%d" % i, "relu")
    n.add("fc6", "fc", out=4096)
    n.add("fc6_relu", "relu")
    n.add("fc7", "fc", out=4096)
    n.add("fc7_relu", "relu")
    n.add("fc8", "fc", out=1000)
    n.add("prob", "softmax")
    return n


def mobilenetv2():
    n = Net("MobileNetV2", "Sandler et al., CVPR 2018 (width 1.0, as torchvision mobilenet_v2)",
            {"shape": [3, 224, 224]},
            {"params": 3504872, "gmacs": 0.30,
             "ref": "torchvision mobilenet_v2 IMAGENET1K_V1: 3,504,872 params, 0.30 GFLOPS (MACs)"})
    conv_bn_relu(n, "conv0", 32, 3, 2, 1, act="relu6")
    cin, bi = 32, 0
    for t, c, reps, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                          (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]:
        for r in range(reps):
            stride = s if r == 0 else 1
            x, hid, pre = n.last, cin * t, "b%d" % bi
            if t != 1:
                conv_bn_relu(n, pre + "_exp", hid, 1, act="relu6")
            conv_bn_relu(n, pre + "_dw", hid, 3, stride, 1, act="relu6", g=hid)
            conv_bn_relu(n, pre + "_proj", c, 1, act=None)
            if stride == 1 and cin == c:
                n.add(pre + "_add", "add", [n.last, x])
            cin, bi = c, bi + 1
    conv_bn_relu(n, "conv_last", 1280, 1, act="relu6")
    n.add("gap", "gap")
    n.add("fc", "fc", out=1000)
    n.add("prob", "softmax")
    return n


def densenet121():
    n = Net("DenseNet-121", "Huang et al., CVPR 2017 (growth 32, bn_size 4, as torchvision densenet121)",
            {"shape": [3, 224, 224]},
            {"params": 7978856, "gmacs": 2.83,
             "ref": "torchvision densenet121 IMAGENET1K_V1: 7,978,856 params, 2.83 GFLOPS (MACs)"})
    conv_bn_relu(n, "conv0", 64, 7, 2, 3)
    n.add("pool0", "maxpool", k=3, s=2, p=1)
    c = 64
    for bi, layers in enumerate([6, 12, 24, 16]):
        feats = n.last
        for li in range(layers):
            pre = "d%d_%d" % (bi + 1, li + 1)
            n.add(pre + "_bn1", "bn", feats)
            n.add(pre + "_relu1", "relu")
            n.conv(pre + "_c1", 128, 1)
            n.add(pre + "_bn2", "bn")
            n.add(pre + "_relu2", "relu")
            new = n.conv(pre + "_c2", 32, 3, 1, 1)
            feats = n.add(pre + "_cat", "concat", [feats, new])
            c += 32
        if bi < 3:
            pre = "t%d" % (bi + 1)
            n.add(pre + "_bn", "bn", feats)
            n.add(pre + "_relu", "relu")
            c //= 2
            n.conv(pre + "_conv", c, 1)
            n.add(pre + "_pool", "avgpool", k=2, s=2)
    n.add("norm5", "bn", feats)
    n.add("relu5", "relu")
    n.add("gap", "gap")
    n.add("fc", "fc", out=1000)
    n.add("prob", "softmax")
    return n


def inception_stem(n):
    """The stem Inception-V3 and Inception-ResNet-V2 share (299x299 -> 192x35x35): five
    conv + bn(eps 0.001) + relu and two 3x3 max pools. Returns that conv-bn-relu builder."""
    def bc(name, out, k, s=1, p=0, x=None):
        return conv_bn_relu(n, name, out, k, s, p, x, eps=0.001)

    bc("c1a", 32, 3, 2)
    bc("c2a", 32, 3)
    bc("c2b", 64, 3, 1, 1)
    n.add("pool1", "maxpool", k=3, s=2)
    bc("c3b", 80, 1)
    bc("c4a", 192, 3)
    n.add("pool2", "maxpool", k=3, s=2)
    return bc


def inceptionv3():
    n = Net("Inception-V3", "Szegedy et al., CVPR 2016 (as torchvision inception_v3, eval mode: "
            "the training-only auxiliary classifier is not part of inference)",
            {"shape": [3, 299, 299]},
            {"params": 23834568, "gmacs": 5.71,
             "ref": "torchvision inception_v3 IMAGENET1K_V1: 27,161,264 params including the "
                    "auxiliary classifier (3,326,696), so 23,834,568 for inference; 5.71 GFLOPS (MACs)"})
    bc = inception_stem(n)

    def inc_a(pre, pf):
        x = n.last
        b1 = bc(pre + "_1x1", 64, 1, x=x)
        bc(pre + "_5x5_1", 48, 1, x=x)
        b5 = bc(pre + "_5x5_2", 64, 5, 1, 2)
        bc(pre + "_3x3dbl_1", 64, 1, x=x)
        bc(pre + "_3x3dbl_2", 96, 3, 1, 1)
        b3 = bc(pre + "_3x3dbl_3", 96, 3, 1, 1)
        n.add(pre + "_pool", "avgpool", x, k=3, s=1, p=1)
        bp = bc(pre + "_pool_proj", pf, 1)
        n.add(pre + "_cat", "concat", [b1, b5, b3, bp])

    def inc_b(pre):
        x = n.last
        b3 = bc(pre + "_3x3", 384, 3, 2, x=x)
        bc(pre + "_3x3dbl_1", 64, 1, x=x)
        bc(pre + "_3x3dbl_2", 96, 3, 1, 1)
        bd = bc(pre + "_3x3dbl_3", 96, 3, 2)
        bp = n.add(pre + "_pool", "maxpool", x, k=3, s=2)
        n.add(pre + "_cat", "concat", [b3, bd, bp])

    def inc_c(pre, c7):
        x = n.last
        b1 = bc(pre + "_1x1", 192, 1, x=x)
        bc(pre + "_7x7_1", c7, 1, x=x)
        bc(pre + "_7x7_2", c7, (1, 7), 1, (0, 3))
        b7 = bc(pre + "_7x7_3", 192, (7, 1), 1, (3, 0))
        bc(pre + "_7x7dbl_1", c7, 1, x=x)
        bc(pre + "_7x7dbl_2", c7, (7, 1), 1, (3, 0))
        bc(pre + "_7x7dbl_3", c7, (1, 7), 1, (0, 3))
        bc(pre + "_7x7dbl_4", c7, (7, 1), 1, (3, 0))
        bd = bc(pre + "_7x7dbl_5", 192, (1, 7), 1, (0, 3))
        n.add(pre + "_pool", "avgpool", x, k=3, s=1, p=1)
        bp = bc(pre + "_pool_proj", 192, 1)
        n.add(pre + "_cat", "concat", [b1, b7, bd, bp])

    def inc_d(pre):
        x = n.last
        bc(pre + "_3x3_1", 192, 1, x=x)
        b3 = bc(pre + "_3x3_2", 320, 3, 2)
        bc(pre + "_7x7x3_1", 192, 1, x=x)
        bc(pre + "_7x7x3_2", 192, (1, 7), 1, (0, 3))
        bc(pre + "_7x7x3_3", 192, (7, 1), 1, (3, 0))
        b7 = bc(pre + "_7x7x3_4", 192, 3, 2)
        bp = n.add(pre + "_pool", "maxpool", x, k=3, s=2)
        n.add(pre + "_cat", "concat", [b3, b7, bp])

    def inc_e(pre):
        x = n.last
        b1 = bc(pre + "_1x1", 320, 1, x=x)
        t = bc(pre + "_3x3_1", 384, 1, x=x)
        a = bc(pre + "_3x3_2a", 384, (1, 3), 1, (0, 1), x=t)
        b = bc(pre + "_3x3_2b", 384, (3, 1), 1, (1, 0), x=t)
        b3 = n.add(pre + "_3x3_cat", "concat", [a, b])
        bc(pre + "_3x3dbl_1", 448, 1, x=x)
        t = bc(pre + "_3x3dbl_2", 384, 3, 1, 1)
        a = bc(pre + "_3x3dbl_3a", 384, (1, 3), 1, (0, 1), x=t)
        b = bc(pre + "_3x3dbl_3b", 384, (3, 1), 1, (1, 0), x=t)
        bd = n.add(pre + "_3x3dbl_cat", "concat", [a, b])
        n.add(pre + "_pool", "avgpool", x, k=3, s=1, p=1)
        bp = bc(pre + "_pool_proj", 192, 1)
        n.add(pre + "_cat", "concat", [b1, b3, bd, bp])

    inc_a("m5b", 32)
    inc_a("m5c", 64)
    inc_a("m5d", 64)
    inc_b("m6a")
    for pre, c7 in [("m6b", 128), ("m6c", 160), ("m6d", 160), ("m6e", 192)]:
        inc_c(pre, c7)
    inc_d("m7a")
    inc_e("m7b")
    inc_e("m7c")
    n.add("gap", "gap")
    n.add("fc", "fc", out=1000)
    n.add("prob", "softmax")
    return n


def inception_resnet_v2():
    n = Net("Inception-ResNet-V2", "Szegedy et al., AAAI 2017 (as timm inception_resnet_v2, 1000 "
            "classes, eval mode). Two differences that do not change the work: each residual "
            "branch's scale (0.17, 0.1, 0.2) is folded into its 1x1 up-projection's weights and "
            "bias (a linear map), as inference engines fold it; Mixed_5b's 3x3 average pool "
            "counts the padding (timm's excludes it: other values at the border, the same cost)",
            {"shape": [3, 299, 299]},
            {"params": 55843464, "gmacs": 13.2,
             "ref": "timm inception_resnet_v2.tf_in1k: 55.8M params, 13.2 GMACs (model card); "
                    "55,843,464 in its module"})
    bc = inception_stem(n)
    # Mixed_5b: 192 -> 320 channels at 35x35
    x = n.last
    b0 = bc("m5b_b0", 96, 1, x=x)
    bc("m5b_b1_1", 48, 1, x=x)
    b1 = bc("m5b_b1_2", 64, 5, 1, 2)
    bc("m5b_b2_1", 64, 1, x=x)
    bc("m5b_b2_2", 96, 3, 1, 1)
    b2 = bc("m5b_b2_3", 96, 3, 1, 1)
    n.add("m5b_pool", "avgpool", x, k=3, s=1, p=1)
    b3 = bc("m5b_b3", 64, 1)
    n.add("m5b_cat", "concat", [b0, b1, b2, b3])

    def residual(pre, x, branches, cin, relu=True):
        n.add(pre + "_cat", "concat", branches)
        n.conv(pre + "_up", cin, 1, bias=True)
        n.add(pre + "_add", "add", [n.last, x])
        if relu:
            n.add(pre + "_relu", "relu")
        return n.last

    for i in range(10):                       # Block35 x 10, scale 0.17
        pre, x = "b35_%d" % i, n.last
        b0 = bc(pre + "_b0", 32, 1, x=x)
        bc(pre + "_b1_1", 32, 1, x=x)
        b1 = bc(pre + "_b1_2", 32, 3, 1, 1)
        bc(pre + "_b2_1", 32, 1, x=x)
        bc(pre + "_b2_2", 48, 3, 1, 1)
        b2 = bc(pre + "_b2_3", 64, 3, 1, 1)
        residual(pre, x, [b0, b1, b2], 320)
    # Mixed_6a: 320 -> 1088 at 17x17
    x = n.last
    b0 = bc("m6a_b0", 384, 3, 2, x=x)
    bc("m6a_b1_1", 256, 1, x=x)
    bc("m6a_b1_2", 256, 3, 1, 1)
    b1 = bc("m6a_b1_3", 384, 3, 2)
    b2 = n.add("m6a_pool", "maxpool", x, k=3, s=2)
    n.add("m6a_cat", "concat", [b0, b1, b2])
    for i in range(20):                       # Block17 x 20, scale 0.1
        pre, x = "b17_%d" % i, n.last
        b0 = bc(pre + "_b0", 192, 1, x=x)
        bc(pre + "_b1_1", 128, 1, x=x)
        bc(pre + "_b1_2", 160, (1, 7), 1, (0, 3))
        b1 = bc(pre + "_b1_3", 192, (7, 1), 1, (3, 0))
        residual(pre, x, [b0, b1], 1088)
    # Mixed_7a: 1088 -> 2080 at 8x8
    x = n.last
    bc("m7a_b0_1", 256, 1, x=x)
    b0 = bc("m7a_b0_2", 384, 3, 2)
    bc("m7a_b1_1", 256, 1, x=x)
    b1 = bc("m7a_b1_2", 288, 3, 2)
    bc("m7a_b2_1", 256, 1, x=x)
    bc("m7a_b2_2", 288, 3, 1, 1)
    b2 = bc("m7a_b2_3", 320, 3, 2)
    b3 = n.add("m7a_pool", "maxpool", x, k=3, s=2)
    n.add("m7a_cat", "concat", [b0, b1, b2, b3])
    for i in range(10):                       # Block8 x 9 (scale 0.2) and one without ReLU
        pre, x = "b8_%d" % i, n.last
        b0 = bc(pre + "_b0", 192, 1, x=x)
        bc(pre + "_b1_1", 192, 1, x=x)
        bc(pre + "_b1_2", 224, (1, 3), 1, (0, 1))
        b1 = bc(pre + "_b1_3", 256, (3, 1), 1, (1, 0))
        residual(pre, x, [b0, b1], 2080, relu=i < 9)
    bc("c7b", 1536, 1)
    n.add("gap", "gap")
    n.add("fc", "fc", out=1000)
    n.add("prob", "softmax")
    return n


def googlenet():
    n = Net("GoogLeNet", "Szegedy et al., CVPR 2015 (Inception v1, as torchvision googlenet, eval "
            "mode without the training-only auxiliary classifiers; its 3x3 'ceil_mode' max pools "
            "are written with padding 1, which gives the same output sizes; the 5x5 branch is a "
            "3x3 convolution, as in torchvision's weights)",
            {"shape": [3, 224, 224]},
            {"params": 6624904, "gmacs": 1.5,
             "ref": "torchvision googlenet IMAGENET1K_V1: 6,624,904 params, 1.50 GFLOPS (MACs)"})
    E = 0.001

    def bc(name, out, k, s=1, p=0, x=None):
        return conv_bn_relu(n, name, out, k, s, p, x, eps=E)

    bc("conv1", 64, 7, 2, 3)
    n.add("pool1", "maxpool", k=3, s=2, p=1)
    bc("conv2", 64, 1)
    bc("conv3", 192, 3, 1, 1)
    n.add("pool2", "maxpool", k=3, s=2, p=1)

    def inception(pre, c1, c3r, c3, c5r, c5, pp):
        x = n.last
        b1 = bc(pre + "_b1", c1, 1, x=x)
        bc(pre + "_b2a", c3r, 1, x=x)
        b2 = bc(pre + "_b2b", c3, 3, 1, 1)
        bc(pre + "_b3a", c5r, 1, x=x)
        b3 = bc(pre + "_b3b", c5, 3, 1, 1)
        n.add(pre + "_pool", "maxpool", x, k=3, s=1, p=1)
        b4 = bc(pre + "_b4", pp, 1)
        n.add(pre + "_cat", "concat", [b1, b2, b3, b4])

    inception("i3a", 64, 96, 128, 16, 32, 32)
    inception("i3b", 128, 128, 192, 32, 96, 64)
    n.add("pool3", "maxpool", k=3, s=2, p=1)
    inception("i4a", 192, 96, 208, 16, 48, 64)
    inception("i4b", 160, 112, 224, 24, 64, 64)
    inception("i4c", 128, 128, 256, 24, 64, 64)
    inception("i4d", 112, 144, 288, 32, 64, 64)
    inception("i4e", 256, 160, 320, 32, 128, 128)
    n.add("pool4", "maxpool", k=2, s=2)
    inception("i5a", 256, 160, 320, 32, 128, 128)
    inception("i5b", 384, 192, 384, 48, 128, 128)
    n.add("gap", "gap")
    n.add("fc", "fc", out=1000)
    n.add("prob", "softmax")
    return n


def encoder_layer(n, pre, x, d, heads, ffn, eps=1e-12, memory=None):
    """One post-norm transformer layer (BERT, BART): self-attention, optionally
    cross-attention on `memory` (a decoder layer), then the feed-forward block."""
    def attention(tag, q_in, kv_in, residual):
        q = n.add(pre + tag + "_q", "linear", q_in, out=d)
        k = n.add(pre + tag + "_k", "linear", kv_in, out=d)
        v = n.add(pre + tag + "_v", "linear", kv_in, out=d)
        n.add(pre + tag + "_scores", "bmm", [q, k], heads=heads, transpose_b=True,
              scale=1.0 / (d // heads) ** 0.5)
        n.add(pre + tag + "_probs", "softmax")
        n.add(pre + tag + "_ctx", "bmm", [pre + tag + "_probs", v], heads=heads)
        n.add(pre + tag + "_attn_out", "linear", out=d)
        n.add(pre + tag + "_attn_add", "add", [n.last, residual])
        return n.add(pre + tag + "_attn_ln", "layernorm", eps=eps)
    x1 = attention("", x, x, x)
    if memory is not None:
        x1 = attention("_x", x1, memory, x1)
    n.add(pre + "_ffn1", "linear", x1, out=ffn)
    n.add(pre + "_gelu", "gelu")
    n.add(pre + "_ffn2", "linear", out=d)
    n.add(pre + "_ffn_add", "add", [n.last, x1])
    return n.add(pre + "_ffn_ln", "layernorm", eps=eps)


def bert(name, layers, d, heads, ffn, vocab, positions, seq, published, source, types=2,
         pooler=True):
    n = Net(name, source, {"tokens": seq}, published)
    n.add("embed", "embed", vocab=vocab, positions=positions, types=types, dim=d)
    x = n.add("embed_ln", "layernorm", eps=1e-12)
    for i in range(layers):
        x = encoder_layer(n, "e%d" % i, x, d, heads, ffn)
    if pooler:
        n.add("cls", "token", x, index=0)
        n.add("pooler", "fc", out=d)
        n.add("pooler_tanh", "tanh")
    return n


def distilbert():
    return bert("DistilBERT", 6, 768, 12, 3072, 30522, 512, 128,
                {"params": 66362880, "gmacs": 5.59,
                 "ref": "Hugging Face distilbert-base-uncased DistilBertModel: 66,362,880 params; "
                        "at 128 tokens 6*(128*(4*768^2+2*768*3072)+2*128^2*768) = 5.59 GMACs"},
                "Sanh et al., 2019 (6-layer BERT-base student, no token types and no pooler, "
                "as Hugging Face DistilBertModel)", types=0, pooler=False)


def bart_base():
    """BART-base, one teacher-forced forward pass: 6 encoder layers over 128 source tokens,
    6 decoder layers (self- and cross-attention) over 128 target tokens, and the tied LM head.
    Generation repeats the decoder per output token; this is the pass a batch runs once."""
    d, heads, ffn, vocab, seq = 768, 12, 3072, 50265, 128
    n = Net("BART-base", "Lewis et al., ACL 2020 (BART-base encoder-decoder with LM head, as "
            "Hugging Face BartForConditionalGeneration; one forward pass at 128+128 tokens)",
            {"tokens": seq},
            {"params": 139420416, "gmacs": 18.08,
             "ref": "Hugging Face facebook/bart-base: 139,420,416 params, with one token "
                    "embedding shared by encoder and decoder and tied to the LM head; here the "
                    "two embeddings and the head are separate tensors (+2*38,603,520), which "
                    "changes memory, not time. MACs: 6*931.1M (encoder) + 6*1258.3M (decoder, "
                    "self+cross attention) + 128*768*50265 (head) = 18.08 G"})
    n.add("enc_embed", "embed", "input", vocab=vocab, positions=1026, types=0, dim=d)
    x = n.add("enc_embed_ln", "layernorm", eps=1e-5)
    for i in range(6):
        x = encoder_layer(n, "enc%d" % i, x, d, heads, ffn, eps=1e-5)
    memory = x
    n.add("dec_embed", "embed", "input", vocab=vocab, positions=1026, types=0, dim=d)
    y = n.add("dec_embed_ln", "layernorm", eps=1e-5)
    for i in range(6):
        y = encoder_layer(n, "dec%d" % i, y, d, heads, ffn, eps=1e-5, memory=memory)
    n.add("lm_head", "linear", y, out=vocab)
    return n


def wav2vec2_features():
    """Wav2Vec2-base's convolutional feature encoder on 1 s of 16 kHz audio: seven 1-D
    convolutions (as 1xK 2-D ones on a [1,1,16000] input) to 49 frames of 512 channels."""
    n = Net("Wav2Vec2-base features", "Baevski et al., NeurIPS 2020 (wav2vec 2.0 base feature "
            "encoder: conv 512x(10/5, 3/2 x4, 2/2 x2), GroupNorm on the first as a bn stand-in)",
            {"shape": [1, 1, 16000]},
            {"params": 4200448, "gmacs": 2.45,
             "ref": "Hugging Face facebook/wav2vec2-base feature_extractor: 4,200,448 params; "
                    "49 frames from 16000 samples"})
    for i, (k, s) in enumerate([(10, 5), (3, 2), (3, 2), (3, 2), (3, 2), (2, 2), (2, 2)]):
        n.conv("conv%d" % i, 512, (1, k), s)
        if i == 0:
            n.add("conv0_norm", "bn", eps=1e-5)
        n.add("conv%d_gelu" % i, "gelu")
    return n


def wav2vec2_encoder():
    return bert("Wav2Vec2-base encoder", 12, 768, 12, 3072, 512, 64, 49,
                {"params": 85054464, "gmacs": 4.21,
                 "ref": "wav2vec2-base transformer: 12 layers of 7,087,872 params (85,054,464) "
                        "at 49 frames; the embed layer (+443,904) stands in for the 512->768 "
                        "feature projection"},
                "Baevski et al., NeurIPS 2020 (wav2vec 2.0 base transformer over the 49 frames "
                "of 1 s of audio; the positional convolution is left out)", types=0, pooler=False)


def ssd300():
    """SSD300 with the VGG-16 backbone (Pascal VOC, 21 classes), as torchvision ssd300_vgg16
    but with padding instead of ceil-mode pooling: the detection heads hang off six feature
    maps (38, 19, 10, 5, 3, 1)."""
    n = Net("SSD300-VGG16", "Liu et al., ECCV 2016 (SSD300, VGG-16 backbone, 21 classes)",
            {"shape": [3, 300, 300]},
            {"params": 26285486, "gmacs": 31.4,
             "ref": "SSD300 VOC: 26,285,486 params, 31.4 GMACs (paper's Caffe model); the "
                    "512-parameter L2Norm scale on conv4_3 is not modelled"})
    cfg = [64, 64, "M", 128, 128, "M", 256, 256, 256, "C", 512, 512, 512, "F", 512, 512, 512]
    i, feats = 0, []
    for v in cfg:
        if v == "M":
            n.add("pool%d" % i, "maxpool", k=2, s=2)
        elif v == "C":
            n.add("pool%d" % i, "maxpool", k=2, s=2, p=1)   # 75 -> 38 like ceil mode
        elif v == "F":
            feats.append(n.last)                             # conv4_3: 38x38x512
            n.add("pool%d" % i, "maxpool", k=2, s=2)
        else:
            i += 1
            n.conv("conv%d" % i, v, 3, 1, 1, bias=True)
            n.add("relu%d" % i, "relu")
    n.add("pool5", "maxpool", k=3, s=1, p=1)
    n.conv("fc6", 1024, 3, 1, 6, d=6, bias=True)
    n.add("fc6_relu", "relu")
    n.conv("fc7", 1024, 1, bias=True)
    feats.append(n.add("fc7_relu", "relu"))                  # 19x19
    for j, (mid, out, s, p) in enumerate([(256, 512, 2, 1), (128, 256, 2, 1), (128, 256, 1, 0),
                                          (128, 256, 1, 0)]):
        n.conv("x%d_1" % j, mid, 1, bias=True)
        n.add("x%d_1_relu" % j, "relu")
        n.conv("x%d_2" % j, out, 3, s, p, bias=True)
        feats.append(n.add("x%d_2_relu" % j, "relu"))       # 10, 5, 3, 1
    for j, (f, boxes) in enumerate(zip(feats, [4, 6, 6, 6, 4, 4])):
        n.conv("loc%d" % j, boxes * 4, 3, 1, 1, x=f, bias=True)
        n.conv("conf%d" % j, boxes * 21, 3, 1, 1, x=f, bias=True)
    return n


def tiny_cnn():
    """Every CNN layer kind and attribute (groups, dilation, rectangular kernels, padding,
    bias, residual add, concat) on a 3x20x20 input: the layer-level correctness tests."""
    n = Net("tiny-cnn", "servesim test network (not a published architecture)",
            {"shape": [3, 20, 20]}, {})
    conv_bn_relu(n, "c1", 8, 3, 1, 1)
    x = n.last
    n.conv("c2", 8, 3, 1, 2, g=2, d=2, bias=True)
    n.add("c2_relu6", "relu6")
    n.add("res", "add", [n.last, x])
    a = n.conv("c3a", 6, (1, 3), 1, (0, 1), bias=True)
    b = n.conv("c3b", 4, (3, 1), 2, (1, 0), x="res")
    n.add("c3a_pool", "maxpool", a, k=3, s=2, p=1)
    n.add("cat", "concat", ["c3a_pool", b])
    n.add("sig", "sigmoid")
    n.add("apool", "avgpool", k=3, s=1, p=1)
    n.conv("dw", 10, 3, 2, 0, g=10)
    n.add("dw_bn", "bn", eps=1e-3)
    n.add("tanh", "tanh")
    n.add("gap", "gap")
    n.add("fc1", "fc", out=12)
    n.add("fc1_gelu", "gelu")
    n.add("fc2", "fc", out=5)
    n.add("prob", "softmax")
    return n


def decoder(fname, name, arch, source, published, **cfg):
    """A decoder-only transformer (format servesim-decoder/1): the fields of its published
    config.json under their Hugging Face names; servesim-calibrate builds the layers (RMSNorm,
    rotary positions, grouped-query attention, SiLU-gated MLP) from them."""
    d = {"format": "servesim-decoder/1", "name": name, "arch": arch, "source": source,
         "generated_by": "calibrate/networks/generate.py", "published": published}
    d.update(cfg)
    with open(os.path.join(HERE, fname), "w") as f:
        json.dump(d, f, indent=1)
        f.write("\n")


def decoders():
    decoder("llama_3_8b.json", "llama-3-8b", "llama-3-8b",
            "meta-llama/Meta-Llama-3-8B config.json (LlamaForCausalLM)",
            {"params": 8030261248,
             "ref": "Meta Llama 3 model card: 8B; Hugging Face safetensors index: 8,030,261,248"},
            hidden_size=4096, num_hidden_layers=32, num_attention_heads=32,
            num_key_value_heads=8, head_dim=128, intermediate_size=14336, vocab_size=128256,
            max_position_embeddings=8192, rope_theta=500000.0, rms_norm_eps=1e-5,
            tie_word_embeddings=False, attention_bias=False)
    decoder("mistral_7b.json", "mistral-7b", "mistral-7b",
            "mistralai/Mistral-7B-v0.1 config.json (MistralForCausalLM; its sliding window "
            "of 4096 is not applied: attention spans the whole context)",
            {"params": 7241732096,
             "ref": "Hugging Face mistralai/Mistral-7B-v0.1: 7,241,732,096 parameters"},
            hidden_size=4096, num_hidden_layers=32, num_attention_heads=32,
            num_key_value_heads=8, head_dim=128, intermediate_size=14336, vocab_size=32000,
            max_position_embeddings=32768, rope_theta=10000.0, rms_norm_eps=1e-5,
            tie_word_embeddings=False, attention_bias=False)
    decoder("qwen2_5_7b.json", "qwen2.5-7b", "qwen2.5-7b",
            "Qwen/Qwen2.5-7B config.json (Qwen2ForCausalLM: biases on q, k and v)",
            {"params": 7615616512,
             "ref": "Qwen2.5 technical report / Hugging Face Qwen/Qwen2.5-7B: 7.61B, "
                    "7,615,616,512 parameters"},
            hidden_size=3584, num_hidden_layers=28, num_attention_heads=28,
            num_key_value_heads=4, head_dim=128, intermediate_size=18944, vocab_size=152064,
            max_position_embeddings=131072, rope_theta=1000000.0, rms_norm_eps=1e-6,
            tie_word_embeddings=False, attention_bias=True)
    decoder("tiny_llama.json", "tiny-llama", "tiny",
            "servesim test decoder: Llama-shaped, two layers of hidden size 256 (not a "
            "published model); the simulator's architecture \"tiny\"",
            {}, hidden_size=256, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, head_dim=64, intermediate_size=512, vocab_size=1000,
            max_position_embeddings=4096, rope_theta=10000.0, rms_norm_eps=1e-5,
            tie_word_embeddings=True, attention_bias=False)
    decoder("tiny_qwen.json", "tiny-qwen", "tiny-qwen",
            "servesim test decoder: Qwen2-shaped (q, k, v biases, untied head), two layers of "
            "hidden size 256 (not a published model)",
            {}, hidden_size=256, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=1, head_dim=64, intermediate_size=704, vocab_size=1536,
            max_position_embeddings=4096, rope_theta=1000000.0, rms_norm_eps=1e-6,
            tie_word_embeddings=False, attention_bias=True)


def main():
    decoders()
    resnet50().write("resnet50.json")
    vgg16().write("vgg16.json")
    mobilenetv2().write("mobilenetv2.json")
    densenet121().write("densenet121.json")
    inceptionv3().write("inceptionv3.json")
    googlenet().write("googlenet.json")
    inception_resnet_v2().write("inception_resnet_v2.json")
    bert("BERT-base", 12, 768, 12, 3072, 30522, 512, 128,
         {"params": 109482240, "gmacs": 11.17,
          "ref": "Hugging Face bert-base-uncased BertModel: 109,482,240 params (the paper's "
                 "110M); at 128 tokens 12*(128*(4*768^2+2*768*3072)+2*128^2*768) = 11.17 GMACs"},
         "Devlin et al., NAACL 2019 (BERT-base encoder with pooler, as Hugging Face BertModel)"
         ).write("bert_base.json")
    bert("tiny-bert", 2, 32, 4, 64, 100, 16, 8, {},
         "servesim test network: a 2-layer BERT-style encoder (not a published architecture)"
         ).write("tiny_bert.json")
    tiny_cnn().write("tiny_cnn.json")
    distilbert().write("distilbert.json")
    bart_base().write("bart_base.json")
    wav2vec2_features().write("wav2vec2_features.json")
    wav2vec2_encoder().write("wav2vec2_encoder.json")
    ssd300().write("ssd300.json")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
# train-state.py: real trained state for bench/compress.sh. Trains a small
# character-level language model (an MLP over a 64-character context:
# embedding 256x64, two hidden layers of HIDDEN, 13.1 M parameters at the
# default 2048: 26 MB of bf16, 52 MB of each fp32 kind) with Adam on
# the texts Debian ships in /usr/share/common-licenses, on the CPU, and dumps
# the training state at steps STEPS - 60, STEPS - 20 and STEPS (the last two
# twenty steps apart, as consecutive checkpoints; the first the key frame of
# a delta three checkpoints back):
#   fp32-S.bin    the fp32 master weights, raw (all tensors concatenated)
#   bf16-S.bin    the bf16 weights a mixed-precision trainer keeps (the master
#                 weights rounded to bfloat16), raw
#   adam-m-S.bin, adam-v-S.bin   Adam's first and second moments (fp32), raw
#   model-bf16-S.pt   torch.save of the bf16 state_dict
#   optim-S.pt        torch.save of the fp32 model and optimizer state_dicts
# usage: train-state.py OUTDIR [STEPS [HIDDEN]]   (defaults 200 and 2048;
# prints the loss)
import glob
import os
import sys
import time

import torch

out = sys.argv[1]
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 200
hidden = int(sys.argv[3]) if len(sys.argv) > 3 else 2048
os.makedirs(out, exist_ok=True)
torch.manual_seed(1)
torch.set_num_threads(max(1, os.cpu_count() or 1))

text = b"".join(open(f, "rb").read() for f in sorted(glob.glob("/usr/share/common-licenses/*"))
                if os.path.isfile(f))
data = torch.frombuffer(bytearray(text), dtype=torch.uint8).long()
ctx, batch = 64, 64


class CharMLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(256, 64)
        self.net = torch.nn.Sequential(
            torch.nn.Linear(ctx * 64, hidden), torch.nn.GELU(),
            torch.nn.Linear(hidden, hidden), torch.nn.GELU(),
            torch.nn.Linear(hidden, 256))

    def forward(self, x):
        return self.net(self.emb(x).flatten(1))


model = CharMLP()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)


def raw(tensors, path):
    with open(path, "wb") as f:
        for t in tensors:
            f.write(t.detach().contiguous().view(torch.uint8).numpy().tobytes())


def dump(step):
    params = list(model.parameters())
    raw(params, f"{out}/fp32-{step}.bin")
    raw([p.to(torch.bfloat16) for p in params], f"{out}/bf16-{step}.bin")
    raw([opt.state[p]["exp_avg"] for p in params], f"{out}/adam-m-{step}.bin")
    raw([opt.state[p]["exp_avg_sq"] for p in params], f"{out}/adam-v-{step}.bin")
    torch.save({k: v.to(torch.bfloat16) for k, v in model.state_dict().items()},
               f"{out}/model-bf16-{step}.pt")
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict()},
               f"{out}/optim-{step}.pt")


t0 = time.time()
n = sum(p.numel() for p in model.parameters())
for step in range(1, steps + 1):
    i = torch.randint(0, len(data) - ctx - 1, (batch,))
    x = torch.stack([data[j:j + ctx] for j in i])
    y = data[i + ctx]
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step in (steps - 60, steps - 20, steps):
        dump(step)
    if step % 50 == 0 or step == steps:
        print(f"train-state: step {step}, loss {loss.item():.3f}", flush=True)
print(f"train-state: {n} parameters on {len(text)} bytes of text, {steps} steps "
      f"in {time.time() - t0:.0f} s; state at steps {steps - 60}, {steps - 20} and {steps} in {out}")

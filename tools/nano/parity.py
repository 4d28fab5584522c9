"""Parity check: the PyTorch training forward (model.py, float64) against the project's float64
reference forward (src/node/reference, TypeScript) on the same random weights.

    /usr/bin/python3 tools/nano/parity.py --tokenizer /tmp/nano/tokenizer [--work /tmp/nano-parity]

Draws random weights (scaled so activations are O(1) and answers spread, not the near-zero
training init), writes them as a Clef release, runs tools/nano/parity-ref.ts on it, runs the
same encoded requests through model.py and compares every probability. Passes when
max |dp| <= 1e-5; exits 1 otherwise.
"""
import argparse
import json
import math
import os
import subprocess
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import Batch, ClefNano  # noqa: E402
from release import write_release  # noqa: E402

TOLERANCE = 1e-5


def randomize(model, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith(("A_log", "dt_bias")):
                continue  # keep the decay initialisation (a meaningful range)
            if p.dim() == 0:
                p.copy_(torch.tensor(math.log(8.0) if "scale" in name else 0.3))
            elif p.dim() == 1:
                p.add_(0.1 * torch.randn(p.shape, generator=g, dtype=p.dtype))
            elif "embed" in name or "lm_head" in name or "type_embedding" in name:
                p.copy_(torch.randn(p.shape, generator=g, dtype=p.dtype))
            else:
                fan_in = p.shape[-1] * (p.shape[1] if p.dim() == 3 else 1)
                p.copy_(torch.randn(p.shape, generator=g, dtype=p.dtype) / math.sqrt(fan_in))
            # Round through float32: the release stores float32, the float64 model must read the
            # same values.
            p.copy_(p.float().double())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokenizer", default="/tmp/nano/tokenizer")
    ap.add_argument("--work", default="/tmp/nano-parity")
    ap.add_argument("--seed", type=int, default=3)
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    vocab = len(json.load(open(os.path.join(args.tokenizer, "tokenizer.json")))["model"]["vocab"])
    vocab += len(json.load(open(os.path.join(args.tokenizer, "tokenizer.json")))["added_tokens"])
    model = ClefNano(vocab).double().eval()
    randomize(model, args.seed)
    release = os.path.join(args.work, "release")
    write_release(model, release, args.tokenizer)
    out = os.path.join(args.work, "reference.json")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    subprocess.run(["npx", "tsx", "tools/nano/parity-ref.ts", release, out], cwd=root, check=True)
    lines = json.load(open(out))
    worst = 0.0
    with torch.no_grad():
        for i, line in enumerate(lines):
            logits = model(Batch([line], dtype=torch.float64))
            for qi, q in enumerate(line["q"]):
                k = len(q["o"])
                p = torch.softmax(logits[qi, :k], -1)
                ref = torch.tensor(line["p"][qi], dtype=torch.float64)
                d = (p - ref).abs().max().item()
                worst = max(worst, d)
                print(f"request {i + 1} question {qi + 1}: {k} options, "
                      f"{len(line['ids'])} tokens, max |dp| {d:.3e}, "
                      f"p range [{ref.min().item():.3f}, {ref.max().item():.3f}]")
    verdict = "PASS" if worst <= TOLERANCE else "FAIL"
    print(f"{verdict}: max |dp| over {len(lines)} requests = {worst:.3e} (tolerance {TOLERANCE})")
    sys.exit(0 if worst <= TOLERANCE else 1)


if __name__ == "__main__":
    main()

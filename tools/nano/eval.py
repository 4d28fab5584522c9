"""PyTorch probabilities for the evaluation requests make-data.ts --eval encoded.

    /usr/bin/python3 tools/nano/eval.py --ckpt /tmp/nano/run/best.pt \
        --lines /tmp/nano/eval-val.jsonl /tmp/nano/eval-test.jsonl --out /tmp/nano/torch-probs.json

Writes {"<split>/<index>/<kind>": [p per option in prompt order]} with a float32 softmax of
float32 logits (the model as trained). tools/nano/eval.ts computes the figures from these and
from the converted package with one metric code.
"""
import argparse
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export import load_model  # noqa: E402
from model import Batch  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", default="/tmp/nano/run/best.pt")
    ap.add_argument("--tokenizer", default="/tmp/nano/tokenizer")
    ap.add_argument("--lines", nargs="+", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--tokens", type=int, default=12000, help="padded tokens per batch")
    ap.add_argument("--every", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(1)
    model = load_model(args.ckpt, args.tokenizer)
    lines = [json.loads(s) for path in args.lines for s in open(path)]
    # Smoke runs only: every Nth line in file order (eval.ts --every N keeps the same cases).
    lines = lines[::args.every]
    lines.sort(key=lambda l: len(l["ids"]))
    out = {}
    started = time.time()
    i = 0
    with torch.no_grad():
        while i < len(lines):
            n = max(1, args.tokens // len(lines[i]["ids"]))
            group = lines[i:i + n]
            # Sorted ascending: the group's last line is its longest.
            while len(group) > 1 and len(group[-1]["ids"]) * len(group) > args.tokens:
                group = group[:-1]
            logits = model(Batch(group))
            for qi, line in enumerate(group):
                k = len(line["q"][0]["o"])
                p = torch.softmax(logits[qi, :k].float(), -1)
                out[f"{line['split']}/{line['index']}/{line['kind']}"] = p.tolist()
            i += len(group)
            print(f"{i}/{len(lines)} requests, {time.time() - started:.0f} s", flush=True)
    with open(args.out, "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()

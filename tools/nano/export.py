"""Writes a trained clef-nano checkpoint as a Clef release directory.

    /usr/bin/python3 tools/nano/export.py --ckpt /tmp/nano/run/best.pt \
        --tokenizer /tmp/nano/tokenizer --out /tmp/nano/release

Then convert it with the project's converter:
    npx clef-web convert /tmp/nano/release models/clef-nano --dtype fp32 --name clef-nano
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import ClefNano  # noqa: E402
from release import write_release  # noqa: E402
from train import vocab_size  # noqa: E402


def load_model(ckpt, tokenizer_dir):
    model = ClefNano(vocab_size(tokenizer_dir))
    model.load_state_dict(torch.load(ckpt)["model"])
    return model.eval()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", default="/tmp/nano/run/best.pt")
    ap.add_argument("--tokenizer", default="/tmp/nano/tokenizer")
    ap.add_argument("--out", default="/tmp/nano/release")
    args = ap.parse_args()
    model = load_model(args.ckpt, args.tokenizer)
    write_release(model, args.out, args.tokenizer)
    state = torch.load(args.ckpt)["state"]
    print(f"wrote {args.out} from step {state['step']} ({state['elapsed'] / 60:.1f} min trained)")


if __name__ == "__main__":
    main()

"""Trains clef-nano on the requests make-data.ts encoded (CLINC150 train + oos_train only).

    nice -n 19 /usr/bin/python3 tools/nano/train.py --data /tmp/nano --out /tmp/nano/run \
        --minutes 80

Cross-entropy over each question's options, AdamW, linear warmup then cosine decay over the
time budget (the schedule follows elapsed training time, so a resumed run continues it).
Streams train.jsonl (batches of similar lengths under a token budget), checkpoints every few
minutes (resume: run the same command again), measures 151-way accuracy and OOS AUROC on
val-select.jsonl (val + oos_val, never test) and keeps the best checkpoint as best.pt.
"""
import argparse
import json
import math
import os
import random
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import Batch, ClefNano  # noqa: E402


def vocab_size(tokenizer_dir):
    tok = json.load(open(os.path.join(tokenizer_dir, "tokenizer.json")))
    return len(tok["model"]["vocab"]) + len(tok["added_tokens"])


def batches(path, start_line, token_budget, window, rng):
    """Yields (next line number, lines): windows of `window` lines sorted by length, cut into
    batches of at most `token_budget` padded tokens, shuffled within the window."""
    with open(path) as f:
        for _ in range(start_line):
            f.readline()
        line_no = start_line
        while True:
            chunk = []
            for _ in range(window):
                s = f.readline()
                if not s:
                    break
                chunk.append(json.loads(s))
            if not chunk:
                return
            line_no += len(chunk)
            chunk.sort(key=lambda l: len(l["ids"]))
            groups, cur = [], []
            for l in chunk:
                longest = max([len(l["ids"])] + [len(c["ids"]) for c in cur])
                if cur and longest * (len(cur) + 1) > token_budget:
                    groups.append(cur)
                    cur = []
                cur.append(l)
            if cur:
                groups.append(cur)
            rng.shuffle(groups)
            for i, g in enumerate(groups):
                # The line number is only safe to resume from at the window's end.
                yield (line_no if i == len(groups) - 1 else None), g


def auroc(scores_pos, scores_neg):
    """P(score of a random positive > a random negative), ties half (Mann-Whitney)."""
    pairs = sorted([(s, 1) for s in scores_pos] + [(s, 0) for s in scores_neg])
    rank_sum, i = 0.0, 0
    while i < len(pairs):
        j = i
        while j < len(pairs) and pairs[j][0] == pairs[i][0]:
            j += 1
        avg = (i + j + 1) / 2  # 1-based average rank of the tie group
        rank_sum += avg * sum(1 for k in range(i, j) if pairs[k][1] == 1)
        i = j
    n_pos, n_neg = len(scores_pos), len(scores_neg)
    return (rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


@torch.no_grad()
def validate(model, lines, batch_size=8):
    """151-way: accuracy over the 150 intents on in-scope lines; AUROC of P(none) oos vs in."""
    model.eval()
    correct = total = 0
    none_in, none_oos = [], []
    for i in range(0, len(lines), batch_size):
        group = lines[i:i + batch_size]
        logits = model(Batch(group))
        for qi, line in enumerate(group):
            k = len(line["q"][0]["o"])
            p = torch.softmax(logits[qi, :k].float(), -1)
            none_idx = line["opts_none"]
            p_none = p[none_idx].item()
            if line["gold"] == "oos":
                none_oos.append(p_none)
            else:
                none_in.append(p_none)
                masked = p.clone()
                masked[none_idx] = -1
                correct += int(masked.argmax().item() == line["q"][0]["y"])
                total += 1
    model.train()
    return correct / max(total, 1), auroc(none_oos, none_in)


def load_selection(path, keep_val_every, keep_oos_every):
    lines = []
    with open(path) as f:
        for s in f:
            l = json.loads(s)
            if l["split"] == "val" and (l["index"] // 10) % keep_val_every:
                continue
            if l["split"] == "oos_val" and l["index"] % keep_oos_every:
                continue
            lines.append(l)
    # Every line has the same 151 options: `none`'s index is the label of any oos line.
    none_idx = next(l["q"][0]["y"] for l in lines if l["gold"] == "oos")
    for l in lines:
        l["opts_none"] = none_idx
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/tmp/nano")
    ap.add_argument("--out", default="/tmp/nano/run")
    ap.add_argument("--minutes", type=float, default=80.0, help="training time budget")
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--tokens", type=int, default=8192, help="padded tokens per batch")
    ap.add_argument("--ckpt-minutes", type=float, default=4.0)
    ap.add_argument("--val-minutes", type=float, default=12.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--init", default=None,
                    help="start from these weights (construct-init.py's init.pt) when there is "
                         "no last.pt; they are validated first, so best.pt is never worse")
    ap.add_argument("--train-file", default="train.jsonl",
                    help="train.jsonl, or train-short.jsonl (make-data.ts --short)")
    # A 151-way prompt is ~2,250 tokens: on a shared CPU the selection set has to stay small.
    ap.add_argument("--select-val-every", type=int, default=3,
                    help="keep every Nth of val-select's val lines (every 10th val query)")
    ap.add_argument("--select-oos-every", type=int, default=2, help="keep every Nth oos_val")
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    os.makedirs(args.out, exist_ok=True)
    log = open(os.path.join(args.out, "train.log"), "a")

    def say(msg):
        line = f"{time.strftime('%H:%M:%S')} {msg}"
        print(line, flush=True)
        log.write(line + "\n")
        log.flush()

    model = ClefNano(vocab_size(os.path.join(args.data, "tokenizer")))
    decay, no_decay = [], []
    for n, p in model.named_parameters():
        (decay if p.dim() >= 2 and "embed" not in n else no_decay).append(p)
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.98))
    state = {"step": 0, "elapsed": 0.0, "line": 0, "epoch_pass": 0, "best": -1.0, "history": []}
    last = os.path.join(args.out, "last.pt")
    if os.path.exists(last):
        ck = torch.load(last)
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["opt"])
        state = ck["state"]
        say(f"resumed at step {state['step']}, {state['elapsed'] / 60:.1f} min trained")
    elif args.init is not None:
        model.load_state_dict(torch.load(args.init)["model"])
        say(f"initialised from {args.init}")
    selection = load_selection(os.path.join(args.data, "val-select.jsonl"),
                               args.select_val_every, args.select_oos_every)
    say(f"selection set: {sum(l['gold'] != 'oos' for l in selection)} val + "
        f"{sum(l['gold'] == 'oos' for l in selection)} oos_val (151-way)")
    budget = args.minutes * 60
    rng = random.Random(args.seed + state["step"])

    def save(path):
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "state": state},
                   path + ".tmp")
        os.replace(path + ".tmp", path)

    def lr_at(step, elapsed):
        warm = min(1.0, (step + 1) / args.warmup)
        frac = min(1.0, elapsed / budget)
        return args.lr * warm * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * frac)))

    if args.init is not None and state["step"] == 0:
        t0 = time.time()
        acc, auc = validate(model, selection)
        state["best"] = acc + auc
        state["history"].append({"step": 0, "acc150": acc, "auroc": auc})
        say(f"validate step 0 (initial weights): 150-way acc {acc:.4f}, oos AUROC {auc:.4f} "
            f"({time.time() - t0:.0f} s)")
        save(os.path.join(args.out, "best.pt"))
    model.train()
    t_last = time.time()
    last_ckpt = last_val = state["elapsed"]
    run_loss = run_acc = run_n = 0.0
    done = False
    while not done:
        if state.get("train_file", "train.jsonl") != args.train_file:
            say(f"switching to {args.train_file} from its start")
            state["train_file"], state["line"] = args.train_file, 0
        stream = batches(os.path.join(args.data, args.train_file), state["line"], args.tokens,
                         512, rng)
        for resume_line, group in stream:
            b = Batch(group)
            for g in opt.param_groups:
                g["lr"] = lr_at(state["step"], state["elapsed"])
            logits = model(b)
            loss = F.cross_entropy(logits, b.labels)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            now = time.time()
            state["elapsed"] += now - t_last
            t_last = now
            state["step"] += 1
            run_loss += loss.item()
            run_acc += (logits.argmax(-1) == b.labels).float().mean().item()
            run_n += 1
            if resume_line is not None:
                state["line"] = resume_line
            if state["step"] % 20 == 0:
                say(f"step {state['step']} line {state['line']} loss {run_loss / run_n:.4f} "
                    f"acc {run_acc / run_n:.3f} lr {opt.param_groups[0]['lr']:.2e} "
                    f"{state['elapsed'] / 60:.1f} min")
                run_loss = run_acc = run_n = 0.0
            # A STOP file ends the run like the budget does: validate, keep the best, save.
            over = state["elapsed"] >= budget or os.path.exists(os.path.join(args.out, "STOP"))
            if state["elapsed"] - last_val >= args.val_minutes * 60 or over:
                t0 = time.time()
                acc, auc = validate(model, selection)
                score = acc + auc
                state["history"].append({"step": state["step"], "acc150": acc, "auroc": auc})
                say(f"validate step {state['step']}: 150-way acc {acc:.4f}, oos AUROC {auc:.4f} "
                    f"({time.time() - t0:.0f} s)")
                if score > state["best"]:
                    state["best"] = score
                    save(os.path.join(args.out, "best.pt"))
                    say("  new best")
                last_val = state["elapsed"]
                t_last = time.time()  # validation time is not training time
            if state["elapsed"] - last_ckpt >= args.ckpt_minutes * 60 or over:
                save(last)
                last_ckpt = state["elapsed"]
            if over:
                done = True
                break
        else:
            state["line"] = 0
            state["epoch_pass"] += 1
            say(f"reached the end of {args.train_file}: starting over")
    save(last)
    say(f"done: step {state['step']}, {state['elapsed'] / 60:.1f} min")


if __name__ == "__main__":
    main()

"""clef-nano's initial weights: a bag-of-words matcher fitted on CLINC150 train + oos_train,
written into the release architecture, which train.py then fine-tunes end to end.

    /usr/bin/python3 tools/nano/construct-init.py --tokens /tmp/nano/tokens.json \
        --out /tmp/nano/init.pt

Why: trained from random weights on this machine's share of two CPU cores, the model stayed at
chance (tools/nano/README.md). The same forward can express a bag-of-words classifier exactly,
so the weights start there instead of at random:

* query words ("flagged" tokens: in train queries, not in any template text or option id)
  embed as [1, 1, c_t (30 dims), 0...]; every other token as [1, 0, noise, 0...];
* layers 0-2 start as identities (out_proj and down_proj zero, the rest random as usual);
* the full-attention layer (layer 3) attends, from every position, uniformly to the query words
  before it (keys from the flag, queries constant) and writes the mean of their c_t into dims
  32-61; the final norm keeps only those dims; so q_vec and glob of the head are LN(bag);
* lm_head rows of option-id tokens are class vectors (all other rows zero): the head's prior,
  exp(prior_logit_scale) * cos(mean lm_head rows of the option span, normalize(q_vec + glob)),
  scores each option; the head's joint part starts nearly closed (residual_gate -4).

The proxy below computes exactly that score (LN, cosine, the value's RMS normalisation) and
fits c_t, the lm_head rows and the scale on train + oos_train (151-way softmax, out-of-scope
queries labelled `none`); val + oos_val only report. No test split is read.
"""
import argparse
import json
import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import ClefNano  # noqa: E402

CONTENT = 30  # c_t dims: two kv heads carry 15 each
BOW = 32  # residual dims 32..61 receive the bag


def ragged(seqs):
    """(flat ids, row index per id, row lengths) for index_add bags."""
    flat = torch.tensor([t for s in seqs for t in s], dtype=torch.long)
    rows = torch.tensor([i for i, s in enumerate(seqs) for _ in s], dtype=torch.long)
    return flat, rows, len(seqs)


class Proxy(torch.nn.Module):
    def __init__(self, vocab, flagged, option_spans):
        super().__init__()
        self.C = torch.nn.Parameter(torch.randn(vocab, CONTENT) * 0.5)
        self.L = torch.nn.Parameter(torch.randn(vocab, 64) * 0.1)
        self.log_scale = torch.nn.Parameter(torch.tensor(math.log(20.0)))
        self.flagged = flagged  # bool (vocab,)
        self.opt_flat, self.opt_rows, self.n_opt = ragged(option_spans)
        self.opt_len = torch.tensor([len(s) for s in option_spans], dtype=torch.float32)

    def value(self):
        # input_layernorm: x / rms(x) with x = [1, 1, c, 0...] (64 dims): rms = sqrt((2+|c|^2)/64)
        return self.C * 8.0 / torch.sqrt(2.0 + self.C.pow(2).sum(-1, keepdim=True))

    def anchor(self, queries):
        """normalize(LN(pad(mean of flagged tokens' values))) per query."""
        keep = [[t for t in q if self.flagged[t]] for q in queries]
        keep = [k if k else [0] for k in keep]  # no query word: a zero bag (token 0 is unflagged)
        flat, rows, n = ragged(keep)
        v = self.value()[flat] * self.flagged[flat, None].float()
        bag = torch.zeros(n, CONTENT).index_add_(0, rows, v)
        bag = bag / torch.tensor([len(k) for k in keep], dtype=torch.float32)[:, None]
        full = torch.zeros(n, 64)
        full[:, BOW:BOW + CONTENT] = bag
        return F.normalize(F.layer_norm(full, (64,)), dim=-1)

    def options(self):
        lex = torch.zeros(self.n_opt, 64).index_add_(0, self.opt_rows, self.L[self.opt_flat])
        return F.normalize(lex / self.opt_len[:, None], dim=-1)

    def forward(self, queries):
        return torch.exp(self.log_scale.clamp(max=math.log(100.0))) * (
            self.anchor(queries) @ self.options().T)


def auroc(pos, neg):
    pos, neg = torch.tensor(pos), torch.tensor(neg)
    return ((pos[:, None] > neg[None, :]).float() + 0.5 * (pos[:, None] == neg[None, :]).float()
            ).mean().item()


def measure(proxy, items, names):
    with torch.no_grad():
        p = proxy([q["ids"] for q in items]).softmax(-1)
    none = names.index("none")
    ins = [i for i, q in enumerate(items) if q["gold"] != "oos"]
    oos = [i for i, q in enumerate(items) if q["gold"] == "oos"]
    masked = p.clone()
    masked[:, none] = -1
    acc = sum(int(masked[i].argmax().item() == names.index(items[i]["gold"])) for i in ins)
    return acc / len(ins), auroc([p[i, none].item() for i in oos], [p[i, none].item() for i in ins])


def construct(proxy, vocab, flagged, seed):
    torch.manual_seed(seed)
    m = ClefNano(vocab)
    sd = m.state_dict()
    with torch.no_grad():
        emb = torch.zeros(vocab, 64)
        emb[:, 0] = 1.0
        emb[:, 1] = flagged.float()
        emb[:, 2:2 + CONTENT] = torch.where(flagged[:, None], proxy.C.detach(),
                                            torch.randn(vocab, CONTENT) * 0.1)
        sd["model.language_model.embed_tokens.weight"].copy_(emb)
        for i in range(3):  # identities at first; their other weights stay random
            sd[f"model.language_model.layers.{i}.linear_attn.out_proj.weight"].zero_()
            sd[f"model.language_model.layers.{i}.mlp.down_proj.weight"].zero_()
        p = "model.language_model.layers.3."
        sd[p + "mlp.down_proj.weight"].zero_()
        q = sd[p + "self_attn.q_proj.weight"]  # (4 heads x (16 q + 16 gate), 64)
        q.zero_()
        for h in (0, 2):
            q[h * 32 + 4, 0] = 1.0  # constant query on a non-rotary dim
        for h in range(4):
            q[h * 32 + 16:h * 32 + 32, 0] = 2.0  # output gate open: sigmoid(2 * 8) ~ 1
        k = sd[p + "self_attn.k_proj.weight"]
        k.zero_()
        for g in (0, 1):
            k[g * 16 + 4, 1] = 1.0  # key only on query words; others get k = 0
        sd[p + "self_attn.q_norm.weight"].zero_()[4] = 2.0  # scores 36 vs 0
        sd[p + "self_attn.k_norm.weight"].zero_()[4] = 2.0
        v = sd[p + "self_attn.v_proj.weight"]
        v.zero_()
        o = sd[p + "self_attn.o_proj.weight"]
        o.zero_()
        half = CONTENT // 2
        for j in range(half):
            v[j, 2 + j] = 1.0
            v[16 + j, 2 + half + j] = 1.0
            o[BOW + j, 0 * 16 + j] = 1.0  # head 0 reads kv head 0
            o[BOW + half + j, 2 * 16 + j] = 1.0  # head 2 reads kv head 1
        norm = sd["model.language_model.norm.weight"]
        norm.zero_()
        norm[:BOW] = -1.0  # keep only the bag dims
        lm = sd["lm_head.weight"]
        lm.copy_(proxy.L.detach())
        # Only option-id tokens keep a class-vector row: description tokens then add nothing to
        # an option's mean row, and the cosine ignores the longer span (same score with or
        # without a description); true/false of noul questions get equal priors.
        in_options = torch.zeros(vocab, dtype=torch.bool)
        in_options[proxy.opt_flat] = True
        lm[~in_options] = 0.0
        sd["head.prior_logit_scale"].fill_(proxy.log_scale.item())
        sd["head.residual_gate"].fill_(-4.0)
    m.load_state_dict(sd)
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", default="/tmp/nano/tokens.json")
    ap.add_argument("--out", default="/tmp/nano/init.pt")
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--drop", type=float, default=0.0, help="query-token dropout while fitting")
    ap.add_argument("--wd", type=float, default=0.0, help="L2 on c_t and the lm_head rows")
    ap.add_argument("--oos-repeat", type=int, default=4)
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    d = json.load(open(args.tokens))
    vocab, names = d["vocab"], d["intents"] + ["none"]
    in_train = set(t for q in d["queries"]["train"] for t in q["ids"])
    template = set(d["template"])
    flagged = torch.zeros(vocab, dtype=torch.bool)
    for t in in_train - template:
        flagged[t] = True
    print(f"{int(flagged.sum())} query-word tokens", flush=True)
    proxy = Proxy(vocab, flagged, [d["options"][n] for n in names])
    train = d["queries"]["train"] + d["queries"]["oos_train"] * args.oos_repeat
    val = d["queries"]["val"] + d["queries"]["oos_val"]
    y = torch.tensor([names.index("none" if q["gold"] == "oos" else q["gold"]) for q in train])
    opt = torch.optim.Adam(proxy.parameters(), lr=0.02)
    qs = [q["ids"] for q in train]
    for step in range(args.steps):
        perm = torch.randperm(len(qs))[:4096]
        batch = [qs[i] for i in perm]
        if args.drop > 0:  # drop query tokens at random (keep at least one)
            keep = (torch.rand(sum(len(q) for q in batch)) >= args.drop).tolist()
            kept, at = [], 0
            for q in batch:
                kept.append([t for t, k in zip(q, keep[at:at + len(q)]) if k] or q[:1])
                at += len(q)
            batch = kept
        loss = F.cross_entropy(proxy(batch), y[perm])
        loss = loss + args.wd * (proxy.C.pow(2).sum(-1).mean() + proxy.L.pow(2).sum(-1).mean())
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 99 or step == args.steps - 1:
            acc, auc = measure(proxy, val, names)
            print(f"proxy step {step + 1}: loss {loss.item():.3f}, val 150-way {acc:.3f}, "
                  f"oos AUROC {auc:.3f}, scale {proxy.log_scale.exp().item():.1f}", flush=True)
    m = construct(proxy, vocab, flagged, args.seed)
    state = {"step": 0, "elapsed": 0.0, "line": 0, "epoch_pass": 0, "best": -1.0, "history": []}
    torch.save({"model": m.state_dict(), "state": state, "constructed": True}, args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

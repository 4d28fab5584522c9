"""clef-nano in PyTorch: a Qwen3.5-style text backbone and the Clef joint schema head.

Mirrors the project's float64 reference forward (src/node/reference/qwen35.ts, head.ts) term by
term, batched and differentiable. Parameter names are the release layout's, so export is a
state_dict dump: backbone keys `model.language_model.*` and `lm_head.weight`; the head's keys
(under `head.` here) are joint_head.safetensors' names once the prefix is dropped.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

NANO_TEXT = dict(
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=4,
    layer_types=["linear_attention", "linear_attention", "linear_attention", "full_attention"],
    num_attention_heads=4,
    num_key_value_heads=2,
    head_dim=16,
    partial_rotary_factor=0.25,
    rope_theta=10_000_000,
    mrope_section=[1, 1, 0],  # sums to rotary_dim / 2 = 2; text-only positions make it 1-D RoPE
    linear_num_key_heads=2,
    linear_num_value_heads=4,
    linear_key_head_dim=16,
    linear_value_head_dim=16,
    linear_conv_kernel_dim=4,
    rms_norm_eps=1e-6,
    max_position_embeddings=4096,
)
NANO_HEAD = dict(hidden_size=64, width=64, routing_layers=1, layers=2, heads=4, feedforward=128,
                 dropout=0.0)
LOG_100 = math.log(100.0)


class ZeroCentredRMSNorm(nn.Module):
    """x / sqrt(mean(x^2) + eps) * (1 + w), w initialised to zeros."""

    def __init__(self, n, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(n))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * (1 + self.weight)


class GatedRMSNorm(nn.Module):
    """Linear attention's output norm: rmsnorm(o) * w * silu(z), w (not zero-centred) ones."""

    def __init__(self, n, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.eps = eps

    def forward(self, x, z):
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return x * self.weight * F.silu(z)


def l2norm(x, eps=1e-6):
    return x * torch.rsqrt(x.pow(2).sum(-1, keepdim=True) + eps)


class GatedDeltaNet(nn.Module):
    def __init__(self, c):
        super().__init__()
        H = c["hidden_size"]
        self.nk, self.nv = c["linear_num_key_heads"], c["linear_num_value_heads"]
        self.dk, self.dv = c["linear_key_head_dim"], c["linear_value_head_dim"]
        self.key_dim = self.nk * self.dk
        conv_dim = 2 * self.key_dim + self.nv * self.dv
        self.K = c["linear_conv_kernel_dim"]
        self.in_proj_qkv = nn.Linear(H, conv_dim, bias=False)
        self.in_proj_z = nn.Linear(H, self.nv * self.dv, bias=False)
        self.in_proj_b = nn.Linear(H, self.nv, bias=False)
        self.in_proj_a = nn.Linear(H, self.nv, bias=False)
        self.conv1d = nn.Conv1d(conv_dim, conv_dim, self.K, groups=conv_dim, bias=False)
        # Decay rates as Mamba initialises them: A in [1, 16], softplus(dt_bias) in [1e-3, 1e-1].
        self.A_log = nn.Parameter(torch.log(torch.empty(self.nv).uniform_(1, 16)))
        dt = torch.exp(torch.empty(self.nv).uniform_(math.log(1e-3), math.log(1e-1)))
        self.dt_bias = nn.Parameter(dt + torch.log(-torch.expm1(-dt)))
        self.norm = GatedRMSNorm(self.dv, c["rms_norm_eps"])
        self.out_proj = nn.Linear(self.nv * self.dv, H, bias=False)

    def forward(self, x):
        B, T, _ = x.shape
        mixed = self.in_proj_qkv(x).transpose(1, 2)  # (B, C, T)
        conv = F.silu(F.conv1d(F.pad(mixed, (self.K - 1, 0)), self.conv1d.weight,
                               groups=mixed.shape[1])).transpose(1, 2)
        kd = self.key_dim
        q = conv[..., :kd].reshape(B, T, self.nk, self.dk)
        k = conv[..., kd:2 * kd].reshape(B, T, self.nk, self.dk)
        v = conv[..., 2 * kd:].reshape(B, T, self.nv, self.dv)
        q = l2norm(q) / math.sqrt(self.dk)
        k = l2norm(k)
        ratio = self.nv // self.nk
        q = q.repeat_interleave(ratio, dim=2)
        k = k.repeat_interleave(ratio, dim=2)
        beta = torch.sigmoid(self.in_proj_b(x))
        g = -torch.exp(self.A_log) * F.softplus(self.in_proj_a(x) + self.dt_bias)
        o = chunked_gated_delta(q, k, v, g, beta, self.chunk)  # (B, T, nv, dv)
        z = self.in_proj_z(x).reshape(B, T, self.nv, self.dv)
        return self.out_proj(self.norm(o, z).reshape(B, T, -1))

    chunk = 64


def chunked_gated_delta(q, k, v, g, beta, C):
    """The gated delta rule of the reference (per token: S <- e^g S; S <- S + k (b (v - S^T k))^T;
    o = S^T q), computed C tokens at a time (WY form). Within a chunk, with G the cumulative
    log decay and S0 the state before it, the pseudo-values u_j = b_j (v_j - e^{G_j} S0^T k_j -
    sum_{m<j} e^{G_j-G_m} (k_j.k_m) u_m) solve a unit lower-triangular system; then
    o_i = e^{G_i} S0^T q_i + sum_{j<=i} e^{G_i-G_j} (q_i.k_j) u_j and
    S_end = e^{G_C} S0 + sum_j e^{G_C-G_j} k_j u_j^T. Mathematically identical to the loop;
    parity.py checks it against the reference in float64.
    q, k: (B, T, H, dk); v: (B, T, H, dv); g, beta: (B, T, H)."""
    B, T, H, dk = k.shape
    dv = v.shape[-1]
    pad = (-T) % C
    if pad:  # zeros after the end: k = v = beta = 0, g = 0 leave earlier outputs untouched
        q, k, v = (F.pad(t, (0, 0, 0, 0, 0, pad)) for t in (q, k, v))
        g, beta = (F.pad(t, (0, 0, 0, pad)) for t in (g, beta))
    n = (T + pad) // C
    # (B, H, n, C, d)
    q, k, v = (t.reshape(B, n, C, H, -1).permute(0, 3, 1, 2, 4) for t in (q, k, v))
    g, beta = (t.reshape(B, n, C, H).permute(0, 3, 1, 2) for t in (g, beta))
    G = g.cumsum(-1)  # (B, H, n, C)
    lower = torch.ones(C, C, dtype=torch.bool, device=k.device).tril()
    diff = (G[..., :, None] - G[..., None, :]).masked_fill(~lower, float("-inf"))
    decay_ij = diff.exp()  # e^{G_i - G_j} for j <= i, else 0
    strict = decay_ij * (~torch.eye(C, dtype=torch.bool, device=k.device))
    A = beta[..., None] * strict * (k @ k.transpose(-1, -2))  # (B, H, n, C, C), strictly lower
    eye = torch.eye(C, dtype=k.dtype, device=k.device)
    gam = G.exp()
    rhs = torch.cat([beta[..., None] * v, (beta * gam)[..., None] * k], dim=-1)
    sol = torch.linalg.solve_triangular(eye + A, rhs, upper=False, unitriangular=True)
    Wv, Wk = sol[..., :dv], sol[..., dv:]
    P = decay_ij * (q @ k.transpose(-1, -2))  # (B, H, n, C, C) incl. diagonal
    qg = gam[..., None] * q
    k_end = (G[..., -1:] - G).exp()[..., None] * k  # e^{G_C - G_j} k_j
    S = k.new_zeros(B, H, dk, dv)
    outs = []
    for c in range(n):
        U = Wv[:, :, c] - Wk[:, :, c] @ S
        outs.append(qg[:, :, c] @ S + P[:, :, c] @ U)
        S = gam[:, :, c, -1, None, None] * S + k_end[:, :, c].transpose(-1, -2) @ U
    o = torch.stack(outs, dim=2)  # (B, H, n, C, dv)
    return o.permute(0, 2, 3, 1, 4).reshape(B, n * C, H, dv)[:, :T]


def rotate_half_rope(x, positions, rotary, theta):
    """RoPE (rotate_half pairs (i, i + rotary/2)) on the first `rotary` dims of the last axis."""
    half = rotary // 2
    inv = theta ** (-(2 * torch.arange(half, dtype=x.dtype, device=x.device)) / rotary)
    angle = positions[:, None].to(x.dtype) * inv[None, :]  # (T, half)
    c, s = torch.cos(angle)[:, None, :], torch.sin(angle)[:, None, :]  # (T, 1, half)
    a, b = x[..., :half], x[..., half:rotary]
    return torch.cat([a * c - b * s, b * c + a * s, x[..., rotary:]], dim=-1)


class GatedAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        H = c["hidden_size"]
        self.nh, self.nkv, self.hd = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
        self.rotary = int(self.hd * c["partial_rotary_factor"])
        self.theta = c["rope_theta"]
        self.q_proj = nn.Linear(H, 2 * self.nh * self.hd, bias=False)
        self.k_proj = nn.Linear(H, self.nkv * self.hd, bias=False)
        self.v_proj = nn.Linear(H, self.nkv * self.hd, bias=False)
        self.o_proj = nn.Linear(self.nh * self.hd, H, bias=False)
        self.q_norm = ZeroCentredRMSNorm(self.hd, c["rms_norm_eps"])
        self.k_norm = ZeroCentredRMSNorm(self.hd, c["rms_norm_eps"])

    def forward(self, x):
        B, T, _ = x.shape
        qg = self.q_proj(x).reshape(B, T, self.nh, 2 * self.hd)
        q, gate = qg[..., :self.hd], qg[..., self.hd:]
        k = self.k_proj(x).reshape(B, T, self.nkv, self.hd)
        v = self.v_proj(x).reshape(B, T, self.nkv, self.hd)
        pos = torch.arange(T, device=x.device)
        q = rotate_half_rope(self.q_norm(q), pos, self.rotary, self.theta)
        k = rotate_half_rope(self.k_norm(k), pos, self.rotary, self.theta)
        group = self.nh // self.nkv
        k = k.repeat_interleave(group, dim=2)
        v = v.repeat_interleave(group, dim=2)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(self.hd)
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
        scores = scores.masked_fill(causal, float("-inf"))
        out = torch.einsum("bhqk,bkhd->bqhd", scores.softmax(-1), v)
        out = out * torch.sigmoid(gate)
        return self.o_proj(out.reshape(B, T, -1))


class MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        H, I = c["hidden_size"], c["intermediate_size"]
        self.gate_proj = nn.Linear(H, I, bias=False)
        self.up_proj = nn.Linear(H, I, bias=False)
        self.down_proj = nn.Linear(I, H, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, c, kind):
        super().__init__()
        self.kind = kind
        self.input_layernorm = ZeroCentredRMSNorm(c["hidden_size"], c["rms_norm_eps"])
        if kind == "linear_attention":
            self.linear_attn = GatedDeltaNet(c)
        else:
            self.self_attn = GatedAttention(c)
        self.mlp = MLP(c)
        self.post_attention_layernorm = ZeroCentredRMSNorm(c["hidden_size"], c["rms_norm_eps"])

    def forward(self, x):
        h = self.input_layernorm(x)
        x = x + (self.linear_attn(h) if self.kind == "linear_attention" else self.self_attn(h))
        return x + self.mlp(self.post_attention_layernorm(x))


class TextModel(nn.Module):
    def __init__(self, c, vocab):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, c["hidden_size"])
        self.layers = nn.ModuleList(DecoderLayer(c, kind) for kind in c["layer_types"])
        self.norm = ZeroCentredRMSNorm(c["hidden_size"], c["rms_norm_eps"])

    def forward(self, ids):
        x = self.embed_tokens(ids)
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)


class EvidenceLayer(nn.Module):
    """Routing layer: pre-norm cross-attention of option queries to LayerNorm(memory), then FF."""

    def __init__(self, W, heads, F_):
        super().__init__()
        self.query_norm = nn.LayerNorm(W)
        self.memory_norm = nn.LayerNorm(W)
        self.attention = nn.MultiheadAttention(W, heads, batch_first=True)
        self.feedforward_norm = nn.LayerNorm(W)
        self.feedforward = nn.Sequential(nn.Linear(W, F_), nn.GELU(), nn.Dropout(0.0),
                                         nn.Linear(F_, W))

    def forward(self, x, memory, memory_pad):
        m = self.memory_norm(memory)
        a, _ = self.attention(self.query_norm(x), m, m, key_padding_mask=memory_pad,
                              need_weights=False)
        x = x + a
        return x + self.feedforward(self.feedforward_norm(x))


class JointHead(nn.Module):
    def __init__(self, c):
        super().__init__()
        D, W, F_, h = c["hidden_size"], c["width"], c["feedforward"], c["heads"]
        self.W = W
        self.hidden_norm = nn.LayerNorm(D)
        for name in ["memory_projection", "question_projection", "option_question_projection",
                     "global_projection", "option_context_projection",
                     "option_lexical_projection"]:
            setattr(self, name, nn.Linear(D, W, bias=False))
        self.type_embedding = nn.Embedding(3, W)
        nn.init.normal_(self.type_embedding.weight, std=0.02)
        self.evidence_layers = nn.ModuleList(EvidenceLayer(W, h, F_)
                                             for _ in range(c["routing_layers"]))
        self.option_summary_norm = nn.LayerNorm(W)
        self.layers = nn.ModuleList(
            nn.TransformerDecoderLayer(W, h, F_, dropout=0.0, activation="gelu",
                                       batch_first=True, norm_first=True)
            for _ in range(c["layers"]))
        self.field_norm = nn.LayerNorm(W)
        self.option_norm = nn.LayerNorm(W)
        self.residual_scorer = nn.Sequential(nn.Linear(4 * W, W), nn.GELU(), nn.Dropout(0.0),
                                             nn.Linear(W, 1))
        self.prior_logit_scale = nn.Parameter(torch.tensor(math.log(5.0)))
        self.joint_logit_scale = nn.Parameter(torch.tensor(math.log(10.0)))
        self.residual_gate = nn.Parameter(torch.tensor(0.0))

    def forward(self, hidden, lm_head_weight, b):
        """hidden (B, T, D) final-normed backbone output; `b` a Batch. Returns padded logits
        (Q, Kmax) with -inf beyond each question's options."""
        N = self.hidden_norm(hidden)
        memory = self.memory_projection(N)
        glob = N[torch.arange(N.shape[0]), b.lengths - 1]  # (B, D)
        # Span means as matmuls with averaging matrices (exact, no cumsum cancellation).
        q_vec = torch.bmm(b.q_avg, N)[b.q_batch, b.q_slot]  # (Q, D)
        ctx = torch.bmm(b.o_avg, N)[b.o_batch, b.o_slot]  # (O, D)
        lex = torch.bmm(b.o_avg, F.embedding(b.ids, lm_head_weight))[b.o_batch, b.o_slot]
        opts = (self.option_context_projection(ctx) + self.option_lexical_projection(lex)
                + self.option_question_projection(q_vec)[b.o_question])
        # Route options: grouped per request (padded), cross-attending to that request's memory.
        x = opts.new_zeros(b.B, b.o_per_req_max, self.W)
        x[b.o_batch, b.o_req_slot] = opts
        for layer in self.evidence_layers:
            x = layer(x, memory, b.pad)
        routed = x[b.o_batch, b.o_req_slot]  # (O, W)
        # Field vectors.
        base = self.question_projection(q_vec)  # (Q, W)
        grouped = routed.new_zeros(b.Q, b.k_max, self.W)
        grouped[b.o_question, b.o_index] = routed
        w = torch.einsum("qkw,qw->qk", grouped, base) / math.sqrt(self.W)
        w = w.masked_fill(~b.opt_mask, float("-inf")).softmax(-1)
        summary = torch.einsum("qk,qkw->qw", w, grouped)
        fields = (base + self.option_summary_norm(summary) + self.global_projection(glob)[b.q_batch]
                  + self.type_embedding(b.q_type))
        f = fields.new_zeros(b.B, b.q_per_req_max, self.W)
        f[b.q_batch, b.q_req_slot] = fields
        for layer in self.layers:
            f = layer(f, memory, tgt_key_padding_mask=b.q_pad, memory_key_padding_mask=b.pad)
        f = self.field_norm(f)[b.q_batch, b.q_req_slot]  # (Q, W)
        # Logits.
        anchor = F.normalize(q_vec + glob[b.q_batch], dim=-1)  # (Q, D)
        lex_n = F.normalize(lex, dim=-1)
        prior = torch.exp(self.prior_logit_scale.clamp(max=LOG_100)) * (
            lex_n * anchor[b.o_question]).sum(-1)
        o = self.option_norm(routed)
        fo = f[b.o_question]
        cos = (fo * o).sum(-1) / torch.clamp(fo.norm(dim=-1) * o.norm(dim=-1), min=1e-8)
        resid = self.residual_scorer(torch.cat([fo, o, fo * o, (fo - o).abs()], -1)).squeeze(-1)
        logit = prior + torch.sigmoid(self.residual_gate) * (
            torch.exp(self.joint_logit_scale.clamp(max=LOG_100)) * cos + resid)
        out = logit.new_full((b.Q, b.k_max), float("-inf"))
        out[b.o_question, b.o_index] = logit
        return out


class Root(nn.Module):
    """`model.language_model` as the checkpoint names it."""

    def __init__(self, c, vocab):
        super().__init__()
        self.language_model = TextModel(c, vocab)


class ClefNano(nn.Module):
    def __init__(self, vocab, text=NANO_TEXT, head=NANO_HEAD):
        super().__init__()
        self.text_config, self.head_config = dict(text), dict(head)
        self.model = Root(text, vocab)
        self.lm_head = nn.Linear(text["hidden_size"], vocab, bias=False)
        self.head = JointHead(head)
        for name, p in self.named_parameters():
            if name.startswith("model.") and name.endswith(".weight") and p.dim() == 2:
                nn.init.normal_(p, std=0.02)
        nn.init.normal_(self.lm_head.weight, std=0.02)

    def forward(self, b):
        hidden = self.model.language_model(b.ids)
        return self.head(hidden, self.lm_head.weight, b)

    def release_state(self):
        """(backbone tensors, head tensors) under the release's names."""
        backbone, head = {}, {}
        for k, v in self.state_dict().items():
            if k.startswith("head."):
                head[k[len("head."):]] = v
            else:
                backbone[k] = v
        return backbone, head


class Batch:
    """Padded tensors for a list of encoded requests (make-data.ts lines)."""

    def __init__(self, lines, dtype=torch.float32):
        self.B = len(lines)
        T = max(len(l["ids"]) for l in lines)
        self.ids = torch.zeros(self.B, T, dtype=torch.long)
        self.lengths = torch.tensor([len(l["ids"]) for l in lines])
        self.pad = torch.arange(T)[None, :] >= self.lengths[:, None]
        qs = [q for l in lines for q in l["q"]]
        self.Q = len(qs)
        self.q_per_req_max = max(len(l["q"]) for l in lines)
        self.k_max = max(len(q["o"]) for q in qs)
        o_per_req = [sum(len(q["o"]) for q in l["q"]) for l in lines]
        self.o_per_req_max = max(o_per_req)
        self.q_avg = torch.zeros(self.B, self.q_per_req_max, T, dtype=dtype)
        self.o_avg = torch.zeros(self.B, self.o_per_req_max, T, dtype=dtype)
        qb, qslot, qtype, labels = [], [], [], []
        ob, oslot, oq, oi = [], [], [], []
        self.opt_mask = torch.zeros(self.Q, self.k_max, dtype=torch.bool)
        qg = 0
        for bi, l in enumerate(lines):
            self.ids[bi, :len(l["ids"])] = torch.tensor(l["ids"])
            slot = 0
            for qi, q in enumerate(l["q"]):
                s, e = q["s"]
                self.q_avg[bi, qi, s:e] = 1.0 / (e - s)
                qb.append(bi); qslot.append(qi); qtype.append(q["t"]); labels.append(q["y"])
                for j, (s, e) in enumerate(q["o"]):
                    self.o_avg[bi, slot, s:e] = 1.0 / (e - s)
                    ob.append(bi); oslot.append(slot); oq.append(qg); oi.append(j)
                    slot += 1
                self.opt_mask[qg, :len(q["o"])] = True
                qg += 1
        t = lambda v: torch.tensor(v, dtype=torch.long)
        self.q_batch, self.q_slot, self.q_req_slot = t(qb), t(qslot), t(qslot)
        self.q_type, self.labels = t(qtype), t(labels)
        self.o_batch, self.o_slot, self.o_req_slot = t(ob), t(oslot), t(oslot)
        self.o_question, self.o_index = t(oq), t(oi)
        self.q_pad = torch.ones(self.B, self.q_per_req_max, dtype=torch.bool)
        for bi, l in enumerate(lines):
            self.q_pad[bi, :len(l["q"])] = False

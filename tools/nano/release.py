"""Writes a ClefNano model as a Clef release directory (docs/clef-recipe.md §1):
config.json (qwen3_5 with text_config), model.safetensors, joint_head.safetensors,
joint_head_config.json and the tokenizer files. A minimal safetensors writer (float32)."""
import json
import os
import shutil
import struct

import numpy as np


def write_safetensors(path, tensors, metadata=None):
    """tensors: list of (name, float32 numpy array). Header padded to 8 bytes, as the reference
    writer does."""
    header = {}
    if metadata:
        header["__metadata__"] = metadata
    offset = 0
    blobs = []
    for name, arr in tensors:
        arr = np.ascontiguousarray(arr, dtype="<f4")
        data = arr.tobytes()
        header[name] = {"dtype": "F32", "shape": list(arr.shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    raw = json.dumps(header, separators=(",", ":")).encode("utf8")
    raw += b" " * ((8 - len(raw) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)))
        f.write(raw)
        for blob in blobs:
            f.write(blob)


def release_config(text, vocab, eos_id):
    """config.json keys as Qwen3.5 writes them (same structure as the tiny fixture's)."""
    text_config = {
        "attention_bias": False, "attention_dropout": 0.0, "attn_output_gate": True,
        "dtype": "float32", "eos_token_id": eos_id, "full_attention_interval": 4,
        "head_dim": text["head_dim"], "hidden_act": "silu", "hidden_size": text["hidden_size"],
        "initializer_range": 0.02, "intermediate_size": text["intermediate_size"],
        "layer_types": list(text["layer_types"]),
        "linear_conv_kernel_dim": text["linear_conv_kernel_dim"],
        "linear_key_head_dim": text["linear_key_head_dim"],
        "linear_num_key_heads": text["linear_num_key_heads"],
        "linear_num_value_heads": text["linear_num_value_heads"],
        "linear_value_head_dim": text["linear_value_head_dim"],
        "mamba_ssm_dtype": "float32",
        "max_position_embeddings": text["max_position_embeddings"], "mlp_only_layers": [],
        "model_type": "qwen3_5_text", "num_attention_heads": text["num_attention_heads"],
        "num_hidden_layers": text["num_hidden_layers"],
        "num_key_value_heads": text["num_key_value_heads"],
        "partial_rotary_factor": text["partial_rotary_factor"],
        "rms_norm_eps": text["rms_norm_eps"],
        "rope_parameters": {
            "mrope_interleaved": True, "mrope_section": list(text["mrope_section"]),
            "partial_rotary_factor": text["partial_rotary_factor"],
            "rope_theta": text["rope_theta"], "rope_type": "default",
        },
        "use_cache": True, "vocab_size": vocab,
    }
    return {
        "architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5",
        "text_config": text_config, "tie_word_embeddings": False, "transformers_version": "5.0.0",
    }


def write_release(model, out_dir, tokenizer_dir):
    os.makedirs(out_dir, exist_ok=True)
    tok = json.load(open(os.path.join(tokenizer_dir, "tokenizer.json")))
    eos = next((t["id"] for t in tok["added_tokens"] if t["content"] == "<|im_end|>"), None)
    vocab = model.lm_head.weight.shape[0]
    backbone, head = model.release_state()
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(release_config(model.text_config, vocab, eos), f, indent=2)
        f.write("\n")
    as_np = lambda d: [(k, v.detach().cpu().float().numpy()) for k, v in sorted(d.items())]
    write_safetensors(os.path.join(out_dir, "model.safetensors"), as_np(backbone),
                      {"format": "pt"})
    write_safetensors(os.path.join(out_dir, "joint_head.safetensors"), as_np(head),
                      {"format": "pt"})
    with open(os.path.join(out_dir, "joint_head_config.json"), "w") as f:
        json.dump(model.head_config, f, indent=2)
        f.write("\n")
    for name in ["tokenizer.json", "tokenizer_config.json"]:
        shutil.copyfile(os.path.join(tokenizer_dir, name), os.path.join(out_dir, name))

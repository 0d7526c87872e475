// Built-in chat templates (see llama-chat.h). The formats reproduce llama.cpp's src/llama-chat.cpp byte for
// byte, including its quirks (templates that ignore add_ass, roles that are dropped, where trimming happens),
// because prompts must tokenize exactly as they do under llama.cpp.
#include "llama-chat.h"

#include "llama-impl.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// Kept in byte order: llama.cpp keeps its names in a std::map, so llama_chat_builtin_templates lists them
// sorted and programs that print the list expect that order.
static const struct {
    const char *           name;
    enum llm_chat_template tmpl;
} LLM_CHAT_TEMPLATE_NAMES[] = {
    { "bailing",           LLM_CHAT_TEMPLATE_BAILING           },
    { "bailing-think",     LLM_CHAT_TEMPLATE_BAILING_THINK     },
    { "bailing2",          LLM_CHAT_TEMPLATE_BAILING2          },
    { "chatglm3",          LLM_CHAT_TEMPLATE_CHATGLM_3         },
    { "chatglm4",          LLM_CHAT_TEMPLATE_CHATGLM_4         },
    { "chatml",            LLM_CHAT_TEMPLATE_CHATML            },
    { "command-r",         LLM_CHAT_TEMPLATE_COMMAND_R         },
    { "deepseek",          LLM_CHAT_TEMPLATE_DEEPSEEK          },
    { "deepseek-ocr",      LLM_CHAT_TEMPLATE_DEEPSEEK_OCR      },
    { "deepseek2",         LLM_CHAT_TEMPLATE_DEEPSEEK_2        },
    { "deepseek3",         LLM_CHAT_TEMPLATE_DEEPSEEK_3        },
    { "exaone-moe",        LLM_CHAT_TEMPLATE_EXAONE_MOE        },
    { "exaone3",           LLM_CHAT_TEMPLATE_EXAONE_3          },
    { "exaone4",           LLM_CHAT_TEMPLATE_EXAONE_4          },
    { "falcon3",           LLM_CHAT_TEMPLATE_FALCON_3          },
    { "gemma",             LLM_CHAT_TEMPLATE_GEMMA             },
    { "gigachat",          LLM_CHAT_TEMPLATE_GIGACHAT          },
    { "glmedge",           LLM_CHAT_TEMPLATE_GLMEDGE           },
    { "gpt-oss",           LLM_CHAT_TEMPLATE_OPENAI_MOE        },
    { "granite",           LLM_CHAT_TEMPLATE_GRANITE_3_X       },
    { "granite-4.0",       LLM_CHAT_TEMPLATE_GRANITE_4_0       },
    { "granite-4.1",       LLM_CHAT_TEMPLATE_GRANITE_4_1       },
    { "grok-2",            LLM_CHAT_TEMPLATE_GROK_2            },
    { "hunyuan-dense",     LLM_CHAT_TEMPLATE_HUNYUAN_DENSE     },
    { "hunyuan-moe",       LLM_CHAT_TEMPLATE_HUNYUAN_MOE       },
    { "hunyuan-vl",        LLM_CHAT_TEMPLATE_HUNYUAN_VL        },
    { "kimi-k2",           LLM_CHAT_TEMPLATE_KIMI_K2           },
    { "llama2",            LLM_CHAT_TEMPLATE_LLAMA_2           },
    { "llama2-sys",        LLM_CHAT_TEMPLATE_LLAMA_2_SYS       },
    { "llama2-sys-bos",    LLM_CHAT_TEMPLATE_LLAMA_2_SYS_BOS   },
    { "llama2-sys-strip",  LLM_CHAT_TEMPLATE_LLAMA_2_SYS_STRIP },
    { "llama3",            LLM_CHAT_TEMPLATE_LLAMA_3           },
    { "llama4",            LLM_CHAT_TEMPLATE_LLAMA4            },
    { "megrez",            LLM_CHAT_TEMPLATE_MEGREZ            },
    { "minicpm",           LLM_CHAT_TEMPLATE_MINICPM           },
    { "mistral-v1",        LLM_CHAT_TEMPLATE_MISTRAL_V1        },
    { "mistral-v3",        LLM_CHAT_TEMPLATE_MISTRAL_V3        },
    { "mistral-v3-tekken", LLM_CHAT_TEMPLATE_MISTRAL_V3_TEKKEN },
    { "mistral-v7",        LLM_CHAT_TEMPLATE_MISTRAL_V7        },
    { "mistral-v7-tekken", LLM_CHAT_TEMPLATE_MISTRAL_V7_TEKKEN },
    { "monarch",           LLM_CHAT_TEMPLATE_MONARCH           },
    { "openchat",          LLM_CHAT_TEMPLATE_OPENCHAT          },
    { "orion",             LLM_CHAT_TEMPLATE_ORION             },
    { "pangu-embedded",    LLM_CHAT_TEMPLATE_PANGU_EMBED       },
    { "phi3",              LLM_CHAT_TEMPLATE_PHI_3             },
    { "phi4",              LLM_CHAT_TEMPLATE_PHI_4             },
    { "rwkv-world",        LLM_CHAT_TEMPLATE_RWKV_WORLD        },
    { "seed_oss",          LLM_CHAT_TEMPLATE_SEED_OSS          },
    { "smolvlm",           LLM_CHAT_TEMPLATE_SMOLVLM           },
    { "solar-open",        LLM_CHAT_TEMPLATE_SOLAR_OPEN        },
    { "vicuna",            LLM_CHAT_TEMPLATE_VICUNA            },
    { "vicuna-orca",       LLM_CHAT_TEMPLATE_VICUNA_ORCA       },
    { "yandex",            LLM_CHAT_TEMPLATE_YANDEX            },
    { "zephyr",            LLM_CHAT_TEMPLATE_ZEPHYR            },
};

#define N_CHAT_TEMPLATE_NAMES (sizeof(LLM_CHAT_TEMPLATE_NAMES) / sizeof(LLM_CHAT_TEMPLATE_NAMES[0]))

enum llm_chat_template llm_chat_template_from_str(const char * name) {
    if (name == NULL) {
        return LLM_CHAT_TEMPLATE_UNKNOWN;
    }
    for (size_t i = 0; i < N_CHAT_TEMPLATE_NAMES; i++) {
        if (strcmp(LLM_CHAT_TEMPLATE_NAMES[i].name, name) == 0) {
            return LLM_CHAT_TEMPLATE_NAMES[i].tmpl;
        }
    }
    return LLM_CHAT_TEMPLATE_UNKNOWN;
}

// ---- detection ---------------------------------------------------------------------------------------------

static bool has(const char * tmpl, const char * marker) {
    return strstr(tmpl, marker) != NULL;
}

// The Llama-2 / Mistral family: every member carries "[INST]", the variants differ in a few tell-tale
// fragments of their official templates.
static enum llm_chat_template detect_inst_family(const char * t) {
    if (has(t, "[SYSTEM_PROMPT]")) {
        return LLM_CHAT_TEMPLATE_MISTRAL_V7;
    }
    // Mistral's official v1 template concatenates "' [INST] ' + system_message"; v3 and v3-tekken declare
    // tools. See mistralai/cookbook concept-deep-dive/tokenization/chat_templates.md.
    if (has(t, "' [INST] ' + system_message") || has(t, "[AVAILABLE_TOOLS]")) {
        if (has(t, " [INST]")) {
            return LLM_CHAT_TEMPLATE_MISTRAL_V1;
        }
        if (has(t, "\"[INST]\"")) {
            return LLM_CHAT_TEMPLATE_MISTRAL_V3_TEKKEN;
        }
        return LLM_CHAT_TEMPLATE_MISTRAL_V3;
    }
    if (has(t, "content.strip()")) {
        return LLM_CHAT_TEMPLATE_LLAMA_2_SYS_STRIP;
    }
    if (has(t, "bos_token + '[INST]")) {
        return LLM_CHAT_TEMPLATE_LLAMA_2_SYS_BOS;
    }
    if (has(t, "<<SYS>>")) {
        return LLM_CHAT_TEMPLATE_LLAMA_2_SYS;
    }
    return LLM_CHAT_TEMPLATE_LLAMA_2;
}

enum llm_chat_template llm_chat_detect_template(const char * t) {
    if (t == NULL) {
        return LLM_CHAT_TEMPLATE_UNKNOWN;
    }
    const enum llm_chat_template by_name = llm_chat_template_from_str(t);
    if (by_name != LLM_CHAT_TEMPLATE_UNKNOWN) {
        return by_name;
    }

    // The order matters: several families share markers, and llama.cpp resolves overlaps by testing in this
    // sequence.
    if (has(t, "<|im_start|>")) {
        if (has(t, "<|im_sep|>")) {
            return LLM_CHAT_TEMPLATE_PHI_4;
        }
        // SmolVLM uses <|im_start|> as its BOS but its turns are not ChatML
        return has(t, "<end_of_utterance>") ? LLM_CHAT_TEMPLATE_SMOLVLM : LLM_CHAT_TEMPLATE_CHATML;
    }
    if (strncmp(t, "mistral", 7) == 0 || has(t, "[INST]")) {
        return detect_inst_family(t);
    }
    if (has(t, "<|assistant|>") && has(t, "<|end|>")) {
        return LLM_CHAT_TEMPLATE_PHI_3;
    }
    if (has(t, "[gMASK]<sop>")) {
        return LLM_CHAT_TEMPLATE_CHATGLM_4;
    }
    if (has(t, "<|assistant|>") && has(t, "<|user|>")) {
        if (has(t, "<|tool_declare|>")) {
            return LLM_CHAT_TEMPLATE_EXAONE_MOE;
        }
        return has(t, "</s>") ? LLM_CHAT_TEMPLATE_FALCON_3 : LLM_CHAT_TEMPLATE_GLMEDGE;
    }
    if (has(t, "<|{{ item['role'] }}|>") && has(t, "<|begin_of_image|>")) {
        return LLM_CHAT_TEMPLATE_GLMEDGE;
    }
    if (has(t, "<|user|>") && has(t, "<|endoftext|>")) {
        return LLM_CHAT_TEMPLATE_ZEPHYR;
    }
    if (has(t, "bos_token + message['role']")) {
        return LLM_CHAT_TEMPLATE_MONARCH;
    }
    if (has(t, "<start_of_turn>")) {
        return LLM_CHAT_TEMPLATE_GEMMA;
    }
    if (has(t, "'\\n\\nAssistant: ' + eos_token")) {
        return LLM_CHAT_TEMPLATE_ORION;          // OrionStarAI/Orion-14B-Chat
    }
    if (has(t, "GPT4 Correct ")) {
        return LLM_CHAT_TEMPLATE_OPENCHAT;       // openchat/openchat-3.5-0106
    }
    if (has(t, "USER: ") && has(t, "ASSISTANT: ")) {
        return has(t, "SYSTEM: ") ? LLM_CHAT_TEMPLATE_VICUNA_ORCA : LLM_CHAT_TEMPLATE_VICUNA;
    }
    if (has(t, "### Instruction:") && has(t, "<|EOT|>")) {
        return LLM_CHAT_TEMPLATE_DEEPSEEK;       // deepseek-ai/deepseek-coder-33b-instruct
    }
    if (has(t, "<|START_OF_TURN_TOKEN|>") && has(t, "<|USER_TOKEN|>")) {
        return LLM_CHAT_TEMPLATE_COMMAND_R;      // CohereForAI/c4ai-command-r-plus
    }
    if (has(t, "<|start_header_id|>") && has(t, "<|end_header_id|>")) {
        return LLM_CHAT_TEMPLATE_LLAMA_3;
    }
    if (has(t, "[gMASK]sop")) {
        return LLM_CHAT_TEMPLATE_CHATGLM_3;      // chatglm3-6b
    }
    if (has(t, "<用户>")) {
        return LLM_CHAT_TEMPLATE_MINICPM;        // MiniCPM-3B-OpenHermes-2.5-v2
    }
    if (has(t, "'Assistant: ' + message['content'] + eos_token")) {
        return LLM_CHAT_TEMPLATE_DEEPSEEK_2;
    }
    if (has(t, "<｜Assistant｜>") && has(t, "<｜User｜>") && has(t, "<｜end▁of▁sentence｜>")) {
        return LLM_CHAT_TEMPLATE_DEEPSEEK_3;
    }
    if (has(t, "[|system|]") && has(t, "[|assistant|]") && has(t, "[|endofturn|]")) {
        return has(t, "[|tool|]") ? LLM_CHAT_TEMPLATE_EXAONE_4 : LLM_CHAT_TEMPLATE_EXAONE_3;
    }
    if (has(t, "rwkv-world") || has(t, "{{- 'User: ' + message['content']|trim + '\\n\\n' -}}")) {
        return LLM_CHAT_TEMPLATE_RWKV_WORLD;
    }
    if (has(t, "<|start_of_role|>")) {
        // Granite 4.x templates mention tool-call tags; 4.0's also names its default system message
        if (has(t, "<tool_call>") || has(t, "<tools>")) {
            return has(t, "g4_default_system_message") ? LLM_CHAT_TEMPLATE_GRANITE_4_0 : LLM_CHAT_TEMPLATE_GRANITE_4_1;
        }
        return LLM_CHAT_TEMPLATE_GRANITE_3_X;
    }
    if (has(t, "message['role'] + additional_special_tokens[0] + message['content'] + additional_special_tokens[1]")) {
        return LLM_CHAT_TEMPLATE_GIGACHAT;
    }
    if (has(t, "<|role_start|>")) {
        return LLM_CHAT_TEMPLATE_MEGREZ;
    }
    if (has(t, " Ассистент:")) {
        return LLM_CHAT_TEMPLATE_YANDEX;
    }
    if (has(t, "<role>ASSISTANT</role>") && has(t, "'HUMAN'")) {
        return LLM_CHAT_TEMPLATE_BAILING;
    }
    if (has(t, "<role>ASSISTANT</role>") && has(t, "\"HUMAN\"") && has(t, "<think>")) {
        return LLM_CHAT_TEMPLATE_BAILING_THINK;
    }
    if (has(t, "<role>ASSISTANT</role>") && has(t, "<role>HUMAN</role>") && has(t, "<|role_end|>")) {
        return LLM_CHAT_TEMPLATE_BAILING2;
    }
    if (has(t, "<|header_start|>") && has(t, "<|header_end|>")) {
        return LLM_CHAT_TEMPLATE_LLAMA4;
    }
    if (has(t, "<|endofuserprompt|>")) {
        return LLM_CHAT_TEMPLATE_DOTS1;
    }
    if (has(t, "<|extra_0|>") && has(t, "<|extra_4|>")) {
        return LLM_CHAT_TEMPLATE_HUNYUAN_MOE;
    }
    if (has(t, "<|start|>") && has(t, "<|channel|>")) {
        return LLM_CHAT_TEMPLATE_OPENAI_MOE;
    }
    if (has(t, "<｜hy_Assistant｜>") && has(t, "<｜hy_begin▁of▁sentence｜>")) {
        return LLM_CHAT_TEMPLATE_HUNYUAN_VL;
    }
    if (has(t, "<｜hy_Assistant｜>") && has(t, "<｜hy_place▁holder▁no▁3｜>")) {
        return LLM_CHAT_TEMPLATE_HUNYUAN_DENSE;
    }
    if (has(t, "<|im_assistant|>assistant<|im_middle|>")) {
        return LLM_CHAT_TEMPLATE_KIMI_K2;
    }
    if (has(t, "<seed:bos>")) {
        return LLM_CHAT_TEMPLATE_SEED_OSS;
    }
    if (has(t, "'Assistant: '  + message['content'] + '<|separator|>")) {
        return LLM_CHAT_TEMPLATE_GROK_2;
    }
    if (has(t, "[unused9]系统：[unused10]")) {
        return LLM_CHAT_TEMPLATE_PANGU_EMBED;
    }
    if (has(t, "<|begin|>") && has(t, "<|end|>") && has(t, "<|content|>")) {
        return LLM_CHAT_TEMPLATE_SOLAR_OPEN;
    }
    return LLM_CHAT_TEMPLATE_UNKNOWN;
}

// ---- output buffer -----------------------------------------------------------------------------------------

struct chat_out {
    char * data;
    size_t len;
    size_t cap;
    bool   too_long; // the prompt would not fit the int32_t that llama_chat_apply_template returns
    bool   no_mem;
};

static void out_n(struct chat_out * o, const char * s, size_t n) {
    if (o->too_long || o->no_mem || n == 0) {
        return;
    }
    size_t need;
    if (ggml_add_overflow_size(o->len, n, &need) || need > (size_t) INT32_MAX) {
        o->too_long = true;
        return;
    }
    if (need + 1 > o->cap) {
        size_t cap = o->cap < 256 ? 256 : o->cap;
        while (cap < need + 1) {
            cap *= 2; // need + 1 <= 2^31, so doubling from 256 cannot overflow size_t
        }
        char * p = realloc(o->data, cap);
        if (p == NULL) {
            o->no_mem = true;
            return;
        }
        o->data = p;
        o->cap  = cap;
    }
    memcpy(o->data + o->len, s, n);
    o->len = need;
    o->data[o->len] = '\0';
}

static void out_s(struct chat_out * o, const char * s) {
    out_n(o, s, strlen(s));
}

// llama.cpp trims with isspace() in the C locale; the set is spelled out so a program's setlocale() cannot
// change which bytes are stripped
static bool is_c_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static void out_trim(struct chat_out * o, const char * s) {
    size_t b = 0;
    size_t e = strlen(s);
    while (b < e && is_c_space(s[b])) {
        b++;
    }
    while (e > b && is_c_space(s[e - 1])) {
        e--;
    }
    out_n(o, s + b, e - b);
}

// ASCII-only upper-casing, as toupper() does in the C locale
static void out_upper(struct chat_out * o, const char * s) {
    for (; *s; s++) {
        char c = *s;
        if (c >= 'a' && c <= 'z') {
            c = (char) (c - 'a' + 'A');
        }
        out_n(o, &c, 1);
    }
}

static bool role_is(const struct llama_chat_message * m, const char * role) {
    return strcmp(m->role, role) == 0;
}

// ---- formatters --------------------------------------------------------------------------------------------
// Each writes the whole conversation; `n` >= 0 messages, roles and contents are non-NULL.

static void fmt_chatml(struct chat_out * o, const struct llama_chat_message * c, size_t n, bool add_ass) {
    for (size_t i = 0; i < n; i++) {
        out_s(o, "<|im_start|>"); out_s(o, c[i].role); out_s(o, "\n");
        out_s(o, c[i].content); out_s(o, "<|im_end|>\n");
    }
    if (add_ass) {
        out_s(o, "<|im_start|>assistant\n");
    }
}

// Mistral v7 (Mistral-Large-Instruct-2411) and v7-tekken (Mistral-Small-3.1) differ only in the space after
// each opening tag. Neither appends an assistant prefix: the model starts right after [/INST].
static void fmt_mistral_v7(struct chat_out * o, const struct llama_chat_message * c, size_t n, bool tekken) {
    const char * sp = tekken ? "" : " ";
    for (size_t i = 0; i < n; i++) {
        if (role_is(&c[i], "system")) {
            out_s(o, "[SYSTEM_PROMPT]"); out_s(o, sp); out_s(o, c[i].content); out_s(o, "[/SYSTEM_PROMPT]");
        } else if (role_is(&c[i], "user")) {
            out_s(o, "[INST]"); out_s(o, sp); out_s(o, c[i].content); out_s(o, "[/INST]");
        } else {
            out_s(o, sp); out_s(o, c[i].content); out_s(o, "</s>");
        }
    }
}

// Mistral v1 / v3 / v3-tekken: a system message opens the [INST] block of the next user turn.
static void fmt_mistral_v1_v3(struct chat_out * o, const struct llama_chat_message * c, size_t n,
                              enum llm_chat_template t) {
    const char * lead  = t == LLM_CHAT_TEMPLATE_MISTRAL_V1        ? " " : "";
    const char * trail = t == LLM_CHAT_TEMPLATE_MISTRAL_V3_TEKKEN ? ""  : " ";
    const bool   trim_assistant = t == LLM_CHAT_TEMPLATE_MISTRAL_V3;
    bool in_turn = false;
    for (size_t i = 0; i < n; i++) {
        if (!in_turn) {
            out_s(o, lead); out_s(o, "[INST]"); out_s(o, trail);
            in_turn = true;
        }
        if (role_is(&c[i], "system")) {
            out_s(o, c[i].content); out_s(o, "\n\n");
        } else if (role_is(&c[i], "user")) {
            out_s(o, c[i].content); out_s(o, lead); out_s(o, "[/INST]");
        } else {
            out_s(o, trail);
            if (trim_assistant) {
                out_trim(o, c[i].content);
            } else {
                out_s(o, c[i].content);
            }
            out_s(o, "</s>");
            in_turn = false;
        }
    }
}

// Llama 2 and its variants (https://huggingface.co/blog/llama2#how-to-prompt-llama-2). The leading BOS is
// left to the tokenizer; the -bos variant repeats it inside the history.
static void fmt_llama2(struct chat_out * o, const struct llama_chat_message * c, size_t n, enum llm_chat_template t) {
    const bool sys_tags  = t != LLM_CHAT_TEMPLATE_LLAMA_2;
    const bool bos_in    = t == LLM_CHAT_TEMPLATE_LLAMA_2_SYS_BOS;
    const bool strip     = t == LLM_CHAT_TEMPLATE_LLAMA_2_SYS_STRIP;
    bool in_turn = true;
    out_s(o, "[INST] ");
    for (size_t i = 0; i < n; i++) {
        if (!in_turn) {
            in_turn = true;
            out_s(o, bos_in ? "<s>[INST] " : "[INST] ");
        }
        if (role_is(&c[i], "system")) {
            // without <<SYS>> support the system text still goes first, as plain text
            out_s(o, sys_tags ? "<<SYS>>\n" : "");
        }
        if (strip) {
            out_trim(o, c[i].content);
        } else {
            out_s(o, c[i].content);
        }
        if (role_is(&c[i], "system")) {
            out_s(o, sys_tags ? "\n<</SYS>>\n\n" : "\n");
        } else if (role_is(&c[i], "user")) {
            out_s(o, " [/INST]");
        } else {
            out_s(o, "</s>");
            in_turn = false;
        }
    }
}

// "<|role|>\n" + content + `end`, the shape shared by Phi-3, Falcon 3 and Zephyr
static void fmt_pipe_role(struct chat_out * o, const struct llama_chat_message * c, size_t n, bool add_ass,
                          const char * end) {
    for (size_t i = 0; i < n; i++) {
        out_s(o, "<|"); out_s(o, c[i].role); out_s(o, "|>\n"); out_s(o, c[i].content); out_s(o, end);
    }
    if (add_ass) {
        out_s(o, "<|assistant|>\n");
    }
}

static void fmt_phi4(struct chat_out * o, const struct llama_chat_message * c, size_t n, bool add_ass) {
    for (size_t i = 0; i < n; i++) {
        out_s(o, "<|im_start|>"); out_s(o, c[i].role); out_s(o, "<|im_sep|>");
        out_s(o, c[i].content); out_s(o, "<|im_end|>");
    }
    if (add_ass) {
        out_s(o, "<|im_start|>assistant<|im_sep|>");
    }
}

// mlabonne/AlphaMonarch-7B: BOS inside the history, except before the first message (the tokenizer adds it)
static void fmt_monarch(struct chat_out * o, const struct llama_chat_message * c, size_t n, bool add_ass) {
    for (size_t i = 0; i < n; i++) {
        out_s(o, i == 0 ? "" : "<s>");
        out_s(o, c[i].role); out_s(o, "\n"); out_s(o, c[i].content); out_s(o, "</s>\n");
    }
    if (add_ass) {
        out_s(o, "<s>assistant\n");
    }
}

// google/gemma-7b-it has no system role: system texts are trimmed, joined and put in front of the next
// non-model turn
static void fmt_gemma(struct chat_out * o, const struct llama_chat_message * c, size_t n, bool add_ass) {
    struct chat_out sys = { 0 };
    for (size_t i = 0; i < n; i++) {
        if (role_is(&c[i], "system")) {
            out_trim(&sys, c[i].content);
            continue;
        }
        const bool model = role_is(&c[i], "assistant");
        out_s(o, "<start_of_turn>"); out_s(o, model ? "model" : c[i].role); out_s(o, "\n");
        if (sys.len > 0 && !model) {
            out_n(o, sys.data, sys.len); out_s(o, "\n\n");
            sys.len = 0;
        }
        out_trim(o, c[i].content); out_s(o, "<end_of_turn>\n");
    }
    if (add_ass) {
        out_s(o, "<start_of_turn>model\n");
    }
    o->too_long |= sys.too_long;
    o->no_mem   |= sys.no_mem;
    free(sys.data);
}

// OrionStarAI/Orion-14B-Chat: system text joins the next user turn; there is no trailing assistant prefix
// because every user turn already ends with "Assistant: </s>"
static void fmt_orion(struct chat_out * o, const struct llama_chat_message * c, size_t n) {
    struct chat_out sys = { 0 };
    for (size_t i = 0; i < n; i++) {
        if (role_is(&c[i], "system")) {
            out_s(&sys, c[i].content);
        } else if (role_is(&c[i], "user")) {
            out_s(o, "Human: ");
            if (sys.len > 0) {
                out_n(o, sys.data, sys.len); out_s(o, "\n\n");
                sys.len = 0;
            }
            out_s(o, c[i].content); out_s(o, "\n\nAssistant: </s>");
        } else {
            out_s(o, c[i].content); out_s(o, "</s>");
        }
    }
    o->too_long |= sys.too_long;
    o->no_mem   |= sys.no_mem;
    free(sys.data);
}

// openchat/openchat-3.5-0106: the role is capitalised ("GPT4 Correct User: ")
static void fmt_openchat(struct chat_out * o, const struct llama_chat_message * c, size_t n, bool add_ass) {
    for (size_t i = 0; i < n; i++) {
        if (role_is(&c[i], "system")) {
            out_s(o, c[i].content); out_s(o, "<|end_of_turn|>");
            continue;
        }
        out_s(o, "GPT4 Correct ");
        const char * r = c[i].role;
        if (r[0] != '\0') {
            char first = r[0];
            if (first >= 'a' && first <= 'z') {
                first = (char) (first - 'a' + 'A');
            }
            out_n(o, &first, 1);
            out_s(o, r + 1);
        }
        out_s(o, ": "); out_s(o, c[i].content); out_s(o, "<|end_of_turn|>");
    }
    if (add_ass) {
        out_s(o, "GPT4 Correct Assistant:");
    }
}

// eachadea/vicuna-13b-1.1; the Orca variant labels the system text
static void fmt_vicuna(struct chat_out * o, const struct llama_chat_message * c, size_t n, bool add_ass, bool orca) {
    for (size_t i = 0; i < n; i++) {
        if (role_is(&c[i], "system")) {
            if (orca) {
                out_s(o, "SYSTEM: "); out_s(o, c[i].content); out_s(o, "\n");
            } else {
                out_s(o, c[i].content); out_s(o, "\n\n");
            }
        } else if (role_is(&c[i], "user")) {
            out_s(o, "USER: "); out_s(o, c[i].content); out_s(o, "\n");
        } else if (role_is(&c[i], "assistant")) {
            out_s(o, "ASSISTANT: "); out_s(o, c[i].content); out_s(o, "</s>\n");
        }
    }
    if (add_ass) {
        out_s(o, "ASSISTANT:");
    }
}

// deepseek-ai/deepseek-coder-33b-instruct
static void fmt_deepseek(struct chat_out * o, const struct llama_chat_message * c, size_t n, bool add_ass) {
    for (size_t i = 0; i < n; i++) {
        if (role_is(&c[i], "system")) {
            out_s(o, c[i].content);
        } else if (role_is(&c[i], "user")) {
            out_s(o, "### Instruction:\n"); out_s(o, c[i].content); out_s(o, "\n");
        } else if (role_is(&c[i], "assistant")) {
            out_s(o, "### Response:\n"); out_s(o, c[i].content); out_s(o, "\n<|EOT|>\n");
        }
    }
    if (add_ass) {
        out_s(o, "### Response:\n");
    }
}

// CohereForAI/c4ai-command-r-plus
static void fmt_command_r(struct chat_out * o, const struct llama_chat_message * c, size_t n, bool add_ass) {
    for (size_t i = 0; i < n; i++) {
        const char * tag = role_is(&c[i], "system")    ? "<|SYSTEM_TOKEN|>"
                         : role_is(&c[i], "user")      ? "<|USER_TOKEN|>"
                         : role_is(&c[i], "assistant") ? "<|CHATBOT_TOKEN|>" : NULL;
        if (tag) {
            out_s(o, "<|START_OF_TURN_TOKEN|>"); out_s(o, tag); out_trim(o, c[i].content);
            out_s(o, "<|END_OF_TURN_TOKEN|>");
        }
    }
    if (add_ass) {
        out_s(o, "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>");
    }
}

// Llama 3 and Llama 4 share the shape, with different header and end-of-turn tokens
static void fmt_header_role(struct chat_out * o, const struct llama_chat_message * c, size_t n, bool add_ass,
                            const char * start, const char * end, const char * eot) {
    for (size_t i = 0; i < n; i++) {
        out_s(o, start); out_s(o, c[i].role); out_s(o, end); out_s(o, "\n\n");
        out_trim(o, c[i].content); out_s(o, eot);
    }
    if (add_ass) {
        out_s(o, start); out_s(o, "assistant"); out_s(o, end); out_s(o, "\n\n");
    }
}

// ChatGLM3 ("[gMASK]sop", a space after the role line), ChatGLM4 ("[gMASK]<sop>") and GLM-Edge (no prefix)
static void fmt_glm(struct chat_out * o, const struct llama_chat_message * c, size_t n, bool add_ass,
                    const char * prefix, const char * after_role, const char * ass) {
    out_s(o, prefix);
    for (size_t i = 0; i < n; i++) {
        out_s(o, "<|"); out_s(o, c[i].role); out_s(o, "|>"); out_s(o, after_role); out_s(o, c[i].content);
    }
    if (add_ass) {
        out_s(o, ass);
    }
}

// MiniCPM-3B-OpenHermes-2.5-v2: the <AI> tag after each user turn doubles as the assistant prefix
static void fmt_minicpm(struct chat_out * o, const struct llama_chat_message * c, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (role_is(&c[i], "user")) {
            out_s(o, "<用户>"); out_trim(o, c[i].content); out_s(o, "<AI>");
        } else {
            out_trim(o, c[i].content);
        }
    }
}

static void fmt_deepseek2(struct chat_out * o, const struct llama_chat_message * c, size_t n, bool add_ass) {
    for (size_t i = 0; i < n; i++) {
        if (role_is(&c[i], "system")) {
            out_s(o, c[i].content); out_s(o, "\n\n");
        } else if (role_is(&c[i], "user")) {
            out_s(o, "User: "); out_s(o, c[i].content); out_s(o, "\n\n");
        } else if (role_is(&c[i], "assistant")) {
            out_s(o, "Assistant: "); out_s(o, c[i].content); out_s(o, "<｜end▁of▁sentence｜>");
        }
    }
    if (add_ass) {
        out_s(o, "Assistant:");
    }
}

static void fmt_deepseek3(struct chat_out * o, const struct llama_chat_message * c, size_t n, bool add_ass) {
    for (size_t i = 0; i < n; i++) {
        if (role_is(&c[i], "system")) {
            out_s(o, c[i].content); out_s(o, "\n\n");
        } else if (role_is(&c[i], "user")) {
            out_s(o, "<｜User｜>"); out_s(o, c[i].content);
        } else if (role_is(&c[i], "assistant")) {
            out_s(o, "<｜Assistant｜>"); out_s(o, c[i].content); out_s(o, "<｜end▁of▁sentence｜>");
        }
    }
    if (add_ass) {
        out_s(o, "<｜Assistant｜>");
    }
}

// EXAONE 3 (LGAI-EXAONE/EXAONE-3.0-7.8B-Instruct) and 4 (adds the tool role): a user turn ends with a bare
// newline, the others with [|endofturn|]
static void fmt_exaone(struct chat_out * o, const struct llama_chat_message * c, size_t n, bool add_ass, bool tool) {
    for (size_t i = 0; i < n; i++) {
        if (role_is(&c[i], "system")) {
            out_s(o, "[|system|]"); out_trim(o, c[i].content); out_s(o, "[|endofturn|]\n");
        } else if (role_is(&c[i], "user")) {
            out_s(o, "[|user|]"); out_trim(o, c[i].content); out_s(o, "\n");
        } else if (role_is(&c[i], "assistant")) {
            out_s(o, "[|assistant|]"); out_trim(o, c[i].content); out_s(o, "[|endofturn|]\n");
        } else if (tool && role_is(&c[i], "tool")) {
            out_s(o, "[|tool|]"); out_trim(o, c[i].content); out_s(o, "[|endofturn|]\n");
        }
    }
    if (add_ass) {
        out_s(o, "[|assistant|]");
    }
}

static void fmt_exaone_moe(struct chat_out * o, const struct llama_chat_message * c, size_t n, bool add_ass) {
    static const char * const roles[] = { "system", "user", "assistant", "tool" };
    for (size_t i = 0; i < n; i++) {
        for (size_t r = 0; r < sizeof(roles) / sizeof(roles[0]); r++) {
            if (role_is(&c[i], roles[r])) {
                out_s(o, "<|"); out_s(o, roles[r]); out_s(o, "|>\n");
                out_trim(o, c[i].content); out_s(o, "<|endofturn|>\n");
                break;
            }
        }
    }
    if (add_ass) {
        out_s(o, "<|assistant|>\n");
    }
}

// RWKV World: "\n\n" is the end-of-turn token, and the assistant prefix follows a final user message whether
// or not add_ass is set
static void fmt_rwkv_world(struct chat_out * o, const struct llama_chat_message * c, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (role_is(&c[i], "system")) {
            out_s(o, "System: "); out_trim(o, c[i].content); out_s(o, "\n\n");
        } else if (role_is(&c[i], "user")) {
            out_s(o, "User: "); out_trim(o, c[i].content); out_s(o, "\n\n");
            if (i == n - 1) {
                out_s(o, "Assistant:");
            }
        } else if (role_is(&c[i], "assistant")) {
            out_s(o, "Assistant: "); out_trim(o, c[i].content); out_s(o, "\n\n");
        }
    }
}

// IBM Granite. 3.x keeps the pseudo-role "assistant_tool_call" in the header; 4.0 and 4.1 render it as an
// assistant turn.
static void fmt_granite(struct chat_out * o, const struct llama_chat_message * c, size_t n, bool add_ass, bool v4) {
    for (size_t i = 0; i < n; i++) {
        const bool tool_call = role_is(&c[i], "assistant_tool_call");
        out_s(o, "<|start_of_role|>"); out_s(o, tool_call && v4 ? "assistant" : c[i].role); out_s(o, "<|end_of_role|>");
        if (tool_call) {
            out_s(o, "<|tool_call|>");
        }
        out_s(o, c[i].content); out_s(o, "<|end_of_text|>\n");
    }
    if (add_ass) {
        out_s(o, "<|start_of_role|>assistant<|end_of_role|>");
    }
}

// ai-sage/GigaChat: only a leading system message is kept; every user turn is followed by an empty function
// list
static void fmt_gigachat(struct chat_out * o, const struct llama_chat_message * c, size_t n, bool add_ass) {
    const bool has_system = n > 0 && role_is(&c[0], "system");
    out_s(o, "<s>");
    if (has_system) {
        out_s(o, c[0].content); out_s(o, "<|message_sep|>");
    }
    for (size_t i = has_system ? 1 : 0; i < n; i++) {
        if (role_is(&c[i], "user")) {
            out_s(o, "user<|role_sep|>"); out_s(o, c[i].content); out_s(o, "<|message_sep|>");
            out_s(o, "available functions<|role_sep|>[]<|message_sep|>");
        } else if (role_is(&c[i], "assistant")) {
            out_s(o, "assistant<|role_sep|>"); out_s(o, c[i].content); out_s(o, "<|message_sep|>");
        }
    }
    if (add_ass) {
        out_s(o, "assistant<|role_sep|>");
    }
}

static void fmt_megrez(struct chat_out * o, const struct llama_chat_message * c, size_t n, bool add_ass) {
    for (size_t i = 0; i < n; i++) {
        out_s(o, "<|role_start|>"); out_s(o, c[i].role); out_s(o, "<|role_end|>");
        out_s(o, c[i].content); out_s(o, "<|turn_end|>");
    }
    if (add_ass) {
        out_s(o, "<|role_start|>assistant<|role_end|>");
    }
}

// YandexGPT: "\n\n" ends a turn; system messages are not rendered
static void fmt_yandex(struct chat_out * o, const struct llama_chat_message * c, size_t n, bool add_ass) {
    for (size_t i = 0; i < n; i++) {
        if (role_is(&c[i], "user")) {
            out_s(o, " Пользователь: "); out_s(o, c[i].content); out_s(o, "\n\n");
        } else if (role_is(&c[i], "assistant")) {
            out_s(o, " Ассистент: "); out_s(o, c[i].content); out_s(o, "\n\n");
        }
    }
    if (add_ass) {
        out_s(o, " Ассистент:[SEP]");
    }
}

// "<role>ROLE</role>" with "user" spelled HUMAN and other roles upper-cased (inclusionAI Ling / Ring)
static void out_bailing_role(struct chat_out * o, const char * role) {
    out_s(o, "<role>");
    if (strcmp(role, "user") == 0) {
        out_s(o, "HUMAN");
    } else {
        out_upper(o, role);
    }
    out_s(o, "</role>");
}

static void fmt_bailing(struct chat_out * o, const struct llama_chat_message * c, size_t n, bool add_ass, bool think) {
    for (size_t i = 0; i < n; i++) {
        out_bailing_role(o, c[i].role); out_s(o, c[i].content);
    }
    if (add_ass) {
        out_s(o, "<role>ASSISTANT</role>");
        if (think) {
            out_s(o, "<think>");
        }
    }
}

// Ling 2.0: without a leading system message the template switches thinking off explicitly
static void fmt_bailing2(struct chat_out * o, const struct llama_chat_message * c, size_t n, bool add_ass) {
    if (!(n > 0 && role_is(&c[0], "system"))) {
        out_s(o, "<role>SYSTEM</role>detailed thinking off<|role_end|>");
    }
    for (size_t i = 0; i < n; i++) {
        out_bailing_role(o, c[i].role); out_s(o, c[i].content); out_s(o, "<|role_end|>");
    }
    if (add_ass) {
        out_s(o, "<role>ASSISTANT</role>");
    }
}

// SmolVLM: <|im_start|> is only its BOS, the turns are "User:" / "Assistant:" lines
static void fmt_smolvlm(struct chat_out * o, const struct llama_chat_message * c, size_t n, bool add_ass) {
    out_s(o, "<|im_start|>");
    for (size_t i = 0; i < n; i++) {
        if (role_is(&c[i], "system")) {
            out_s(o, c[i].content); out_s(o, "\n\n");
        } else if (role_is(&c[i], "user")) {
            out_s(o, "User: "); out_s(o, c[i].content); out_s(o, "<end_of_utterance>\n");
        } else {
            out_s(o, "Assistant: "); out_s(o, c[i].content); out_s(o, "<end_of_utterance>\n");
        }
    }
    if (add_ass) {
        out_s(o, "Assistant:");
    }
}

// rednote-hilab dots.llm1.inst
static void fmt_dots1(struct chat_out * o, const struct llama_chat_message * c, size_t n, bool add_ass) {
    for (size_t i = 0; i < n; i++) {
        if (role_is(&c[i], "system")) {
            out_s(o, "<|system|>"); out_s(o, c[i].content); out_s(o, "<|endofsystem|>");
        } else if (role_is(&c[i], "user")) {
            out_s(o, "<|userprompt|>"); out_s(o, c[i].content); out_s(o, "<|endofuserprompt|>");
        } else {
            out_s(o, "<|response|>"); out_s(o, c[i].content); out_s(o, "<|endofresponse|>");
        }
    }
    if (add_ass) {
        out_s(o, "<|response|>");
    }
}

// tencent/Hunyuan-A13B-Instruct: <|extra_0|> after a user turn is the assistant prefix, so add_ass adds nothing
static void fmt_hunyuan_moe(struct chat_out * o, const struct llama_chat_message * c, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (role_is(&c[i], "system")) {
            out_s(o, "<|startoftext|>"); out_s(o, c[i].content); out_s(o, "<|extra_4|>");
        } else if (role_is(&c[i], "assistant")) {
            out_s(o, c[i].content); out_s(o, "<|eos|>");
        } else {
            out_s(o, "<|startoftext|>"); out_s(o, c[i].content); out_s(o, "<|extra_0|>");
        }
    }
}

// gpt-oss (OpenAI's Harmony format, reduced to plain messages): a finished assistant turn ends with <|return|>
static void fmt_openai_moe(struct chat_out * o, const struct llama_chat_message * c, size_t n, bool add_ass) {
    for (size_t i = 0; i < n; i++) {
        out_s(o, "<|start|>"); out_s(o, c[i].role); out_s(o, "<|message|>"); out_s(o, c[i].content);
        out_s(o, role_is(&c[i], "assistant") ? "<|return|>" : "<|end|>");
    }
    if (add_ass) {
        out_s(o, "<|start|>assistant");
    }
}

// tencent/Hunyuan-4B-Instruct: only a first-position system message is rendered
static void fmt_hunyuan_dense(struct chat_out * o, const struct llama_chat_message * c, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (i == 0 && role_is(&c[i], "system")) {
            out_s(o, c[i].content); out_s(o, "<｜hy_place▁holder▁no▁3｜>");
        }
        if (role_is(&c[i], "assistant")) {
            out_s(o, "<｜hy_Assistant｜>"); out_s(o, c[i].content); out_s(o, "<｜hy_place▁holder▁no▁2｜>");
        } else if (role_is(&c[i], "user")) {
            out_s(o, "<｜hy_User｜>"); out_s(o, c[i].content); out_s(o, "<｜hy_Assistant｜>");
        }
    }
}

// tencent/HunyuanOCR and HunyuanVL: the role tag follows the content
static void fmt_hunyuan_vl(struct chat_out * o, const struct llama_chat_message * c, size_t n) {
    out_s(o, "<｜hy_begin▁of▁sentence｜>");
    for (size_t i = 0; i < n; i++) {
        if (i == 0 && role_is(&c[i], "system")) {
            out_s(o, c[i].content); out_s(o, "<｜hy_place▁holder▁no▁3｜>");
        } else if (role_is(&c[i], "user")) {
            out_s(o, c[i].content); out_s(o, "<｜hy_User｜>");
        } else if (role_is(&c[i], "assistant")) {
            out_s(o, c[i].content); out_s(o, "<｜hy_Assistant｜>");
        }
    }
}

// moonshotai/Kimi-K2-Instruct; a message with an unknown role keeps its content but gets no header
static void fmt_kimi_k2(struct chat_out * o, const struct llama_chat_message * c, size_t n, bool add_ass) {
    for (size_t i = 0; i < n; i++) {
        if (role_is(&c[i], "system")) {
            out_s(o, "<|im_system|>system<|im_middle|>");
        } else if (role_is(&c[i], "user")) {
            out_s(o, "<|im_user|>user<|im_middle|>");
        } else if (role_is(&c[i], "assistant")) {
            out_s(o, "<|im_assistant|>assistant<|im_middle|>");
        } else if (role_is(&c[i], "tool")) {
            out_s(o, "<|im_system|>tool<|im_middle|>");
        }
        out_s(o, c[i].content); out_s(o, "<|im_end|>");
    }
    if (add_ass) {
        out_s(o, "<|im_assistant|>assistant<|im_middle|>");
    }
}

// ByteDance-Seed/Seed-OSS: assistant contents are trimmed, the others kept verbatim
static void fmt_seed_oss(struct chat_out * o, const struct llama_chat_message * c, size_t n, bool add_ass) {
    for (size_t i = 0; i < n; i++) {
        out_s(o, "<seed:bos>"); out_s(o, c[i].role); out_s(o, "\n");
        if (role_is(&c[i], "assistant")) {
            out_trim(o, c[i].content);
        } else {
            out_s(o, c[i].content);
        }
        out_s(o, "<seed:eos>");
    }
    if (add_ass) {
        out_s(o, "<seed:bos>assistant\n");
    }
}

// Grok 2: system and user texts are trimmed, assistant texts are not
static void fmt_grok2(struct chat_out * o, const struct llama_chat_message * c, size_t n, bool add_ass) {
    for (size_t i = 0; i < n; i++) {
        if (role_is(&c[i], "system")) {
            out_s(o, "System: "); out_trim(o, c[i].content); out_s(o, "<|separator|>\n\n");
        } else if (role_is(&c[i], "user")) {
            out_s(o, "Human: "); out_trim(o, c[i].content); out_s(o, "<|separator|>\n\n");
        } else if (role_is(&c[i], "assistant")) {
            out_s(o, "Assistant: "); out_s(o, c[i].content); out_s(o, "<|separator|>\n\n");
        }
    }
    if (add_ass) {
        out_s(o, "Assistant:");
    }
}

// openPangu-Embedded: "[unused9]<role label>：content[unused10]"; an empty system turn is supplied when the
// conversation does not open with one
static void fmt_pangu(struct chat_out * o, const struct llama_chat_message * c, size_t n, bool add_ass) {
    static const struct { const char * role; const char * label; } labels[] = {
        { "system", "系统" }, { "user", "用户" }, { "assistant", "助手" }, { "tool", "工具" }, { "function", "方法" },
    };
    for (size_t i = 0; i < n; i++) {
        if (i == 0 && !role_is(&c[i], "system")) {
            out_s(o, "[unused9]系统：[unused10]");
        }
        for (size_t k = 0; k < sizeof(labels) / sizeof(labels[0]); k++) {
            if (role_is(&c[i], labels[k].role)) {
                out_s(o, "[unused9]"); out_s(o, labels[k].label); out_s(o, "："); out_s(o, c[i].content);
                out_s(o, "[unused10]");
                break;
            }
        }
    }
    if (add_ass) {
        out_s(o, "[unused9]助手：");
    }
}

// Upstage Solar Open
static void fmt_solar_open(struct chat_out * o, const struct llama_chat_message * c, size_t n, bool add_ass) {
    for (size_t i = 0; i < n; i++) {
        out_s(o, "<|begin|>"); out_s(o, c[i].role); out_s(o, "<|content|>"); out_s(o, c[i].content); out_s(o, "<|end|>");
    }
    if (add_ass) {
        out_s(o, "<|begin|>assistant");
    }
}

int64_t llm_chat_format(enum llm_chat_template t, const struct llama_chat_message * c, size_t n, bool add_ass,
                        char ** out) {
    *out = NULL;
    if (n > 0 && c == NULL) {
        LLAMA_LOG_ERROR("%s: chat is NULL but n_msg = %zu\n", __func__, n);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (c[i].role == NULL || c[i].content == NULL) {
            LLAMA_LOG_ERROR("%s: message %zu has a NULL %s\n", __func__, i, c[i].role == NULL ? "role" : "content");
            return -1;
        }
    }

    struct chat_out o = { 0 };
    switch (t) {
        case LLM_CHAT_TEMPLATE_CHATML:            fmt_chatml(&o, c, n, add_ass); break;
        case LLM_CHAT_TEMPLATE_MISTRAL_V7:        fmt_mistral_v7(&o, c, n, false); break;
        case LLM_CHAT_TEMPLATE_MISTRAL_V7_TEKKEN: fmt_mistral_v7(&o, c, n, true); break;
        case LLM_CHAT_TEMPLATE_MISTRAL_V1:
        case LLM_CHAT_TEMPLATE_MISTRAL_V3:
        case LLM_CHAT_TEMPLATE_MISTRAL_V3_TEKKEN: fmt_mistral_v1_v3(&o, c, n, t); break;
        case LLM_CHAT_TEMPLATE_LLAMA_2:
        case LLM_CHAT_TEMPLATE_LLAMA_2_SYS:
        case LLM_CHAT_TEMPLATE_LLAMA_2_SYS_BOS:
        case LLM_CHAT_TEMPLATE_LLAMA_2_SYS_STRIP: fmt_llama2(&o, c, n, t); break;
        case LLM_CHAT_TEMPLATE_PHI_3:             fmt_pipe_role(&o, c, n, add_ass, "<|end|>\n"); break;
        case LLM_CHAT_TEMPLATE_PHI_4:             fmt_phi4(&o, c, n, add_ass); break;
        case LLM_CHAT_TEMPLATE_FALCON_3:          fmt_pipe_role(&o, c, n, add_ass, "\n"); break;
        case LLM_CHAT_TEMPLATE_ZEPHYR:            fmt_pipe_role(&o, c, n, add_ass, "<|endoftext|>\n"); break;
        case LLM_CHAT_TEMPLATE_MONARCH:           fmt_monarch(&o, c, n, add_ass); break;
        case LLM_CHAT_TEMPLATE_GEMMA:             fmt_gemma(&o, c, n, add_ass); break;
        case LLM_CHAT_TEMPLATE_ORION:             fmt_orion(&o, c, n); break;
        case LLM_CHAT_TEMPLATE_OPENCHAT:          fmt_openchat(&o, c, n, add_ass); break;
        case LLM_CHAT_TEMPLATE_VICUNA:            fmt_vicuna(&o, c, n, add_ass, false); break;
        case LLM_CHAT_TEMPLATE_VICUNA_ORCA:       fmt_vicuna(&o, c, n, add_ass, true); break;
        case LLM_CHAT_TEMPLATE_DEEPSEEK:          fmt_deepseek(&o, c, n, add_ass); break;
        case LLM_CHAT_TEMPLATE_COMMAND_R:         fmt_command_r(&o, c, n, add_ass); break;
        case LLM_CHAT_TEMPLATE_LLAMA_3:
            fmt_header_role(&o, c, n, add_ass, "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>");
            break;
        case LLM_CHAT_TEMPLATE_CHATGLM_3:         fmt_glm(&o, c, n, add_ass, "[gMASK]sop", "\n ", "<|assistant|>"); break;
        case LLM_CHAT_TEMPLATE_CHATGLM_4:         fmt_glm(&o, c, n, add_ass, "[gMASK]<sop>", "\n", "<|assistant|>\n"); break;
        case LLM_CHAT_TEMPLATE_GLMEDGE:           fmt_glm(&o, c, n, add_ass, "", "\n", "<|assistant|>"); break;
        case LLM_CHAT_TEMPLATE_MINICPM:           fmt_minicpm(&o, c, n); break;
        case LLM_CHAT_TEMPLATE_DEEPSEEK_2:        fmt_deepseek2(&o, c, n, add_ass); break;
        case LLM_CHAT_TEMPLATE_DEEPSEEK_3:        fmt_deepseek3(&o, c, n, add_ass); break;
        case LLM_CHAT_TEMPLATE_DEEPSEEK_OCR:
            // no template: the contents are the prompt
            for (size_t i = 0; i < n; i++) {
                out_s(&o, c[i].content);
            }
            break;
        case LLM_CHAT_TEMPLATE_EXAONE_3:          fmt_exaone(&o, c, n, add_ass, false); break;
        case LLM_CHAT_TEMPLATE_EXAONE_4:          fmt_exaone(&o, c, n, add_ass, true); break;
        case LLM_CHAT_TEMPLATE_EXAONE_MOE:        fmt_exaone_moe(&o, c, n, add_ass); break;
        case LLM_CHAT_TEMPLATE_RWKV_WORLD:        fmt_rwkv_world(&o, c, n); break;
        case LLM_CHAT_TEMPLATE_GRANITE_3_X:       fmt_granite(&o, c, n, add_ass, false); break;
        case LLM_CHAT_TEMPLATE_GRANITE_4_0:
        case LLM_CHAT_TEMPLATE_GRANITE_4_1:       fmt_granite(&o, c, n, add_ass, true); break;
        case LLM_CHAT_TEMPLATE_GIGACHAT:          fmt_gigachat(&o, c, n, add_ass); break;
        case LLM_CHAT_TEMPLATE_MEGREZ:            fmt_megrez(&o, c, n, add_ass); break;
        case LLM_CHAT_TEMPLATE_YANDEX:            fmt_yandex(&o, c, n, add_ass); break;
        case LLM_CHAT_TEMPLATE_BAILING:           fmt_bailing(&o, c, n, add_ass, false); break;
        case LLM_CHAT_TEMPLATE_BAILING_THINK:     fmt_bailing(&o, c, n, add_ass, true); break;
        case LLM_CHAT_TEMPLATE_BAILING2:          fmt_bailing2(&o, c, n, add_ass); break;
        case LLM_CHAT_TEMPLATE_LLAMA4:
            fmt_header_role(&o, c, n, add_ass, "<|header_start|>", "<|header_end|>", "<|eot|>");
            break;
        case LLM_CHAT_TEMPLATE_SMOLVLM:           fmt_smolvlm(&o, c, n, add_ass); break;
        case LLM_CHAT_TEMPLATE_DOTS1:             fmt_dots1(&o, c, n, add_ass); break;
        case LLM_CHAT_TEMPLATE_HUNYUAN_MOE:       fmt_hunyuan_moe(&o, c, n); break;
        case LLM_CHAT_TEMPLATE_OPENAI_MOE:        fmt_openai_moe(&o, c, n, add_ass); break;
        case LLM_CHAT_TEMPLATE_HUNYUAN_DENSE:     fmt_hunyuan_dense(&o, c, n); break;
        case LLM_CHAT_TEMPLATE_HUNYUAN_VL:        fmt_hunyuan_vl(&o, c, n); break;
        case LLM_CHAT_TEMPLATE_KIMI_K2:           fmt_kimi_k2(&o, c, n, add_ass); break;
        case LLM_CHAT_TEMPLATE_SEED_OSS:          fmt_seed_oss(&o, c, n, add_ass); break;
        case LLM_CHAT_TEMPLATE_GROK_2:            fmt_grok2(&o, c, n, add_ass); break;
        case LLM_CHAT_TEMPLATE_PANGU_EMBED:       fmt_pangu(&o, c, n, add_ass); break;
        case LLM_CHAT_TEMPLATE_SOLAR_OPEN:        fmt_solar_open(&o, c, n, add_ass); break;
        case LLM_CHAT_TEMPLATE_UNKNOWN:
        default:
            return -1;
    }

    if (o.too_long || o.no_mem) {
        LLAMA_LOG_ERROR("%s: %s\n", __func__,
                        o.too_long ? "formatted chat exceeds INT32_MAX bytes" : "out of memory formatting the chat");
        free(o.data);
        return -1;
    }
    if (o.data == NULL) {
        // an empty prompt (no messages, no assistant prefix) still hands back a valid string
        o.data = calloc(1, 1);
        if (o.data == NULL) {
            LLAMA_LOG_ERROR("%s: out of memory formatting the chat\n", __func__);
            return -1;
        }
    }
    *out = o.data;
    return (int64_t) o.len;
}

// ---- public API --------------------------------------------------------------------------------------------

int32_t llama_chat_apply_template(const char * tmpl, const struct llama_chat_message * chat, size_t n_msg,
                                  bool add_ass, char * buf, int32_t length) {
    // like llama.cpp: no template means ChatML, and an unrecognised one is -1 without a log line (callers probe
    // with it to decide whether to fall back)
    const enum llm_chat_template t = llm_chat_detect_template(tmpl == NULL ? "chatml" : tmpl);
    if (t == LLM_CHAT_TEMPLATE_UNKNOWN) {
        return -1;
    }
    char * text = NULL;
    const int64_t len = llm_chat_format(t, chat, n_msg, add_ass, &text);
    if (len < 0) {
        return -1;
    }
    if (buf != NULL && length > 0) {
        // strncpy semantics, as upstream: a truncated copy carries no terminator, a short one is zero-padded
        const size_t cap = (size_t) length;
        const size_t n   = (size_t) len < cap ? (size_t) len : cap;
        memcpy(buf, text, n);
        if (n < cap) {
            memset(buf + n, 0, cap - n);
        }
    }
    free(text);
    return (int32_t) len;
}

int32_t llama_chat_builtin_templates(const char ** output, size_t len) {
    if (output != NULL) {
        for (size_t i = 0; i < len && i < N_CHAT_TEMPLATE_NAMES; i++) {
            output[i] = LLM_CHAT_TEMPLATE_NAMES[i].name;
        }
    }
    return (int32_t) N_CHAT_TEMPLATE_NAMES;
}

// Built-in chat templates: llama_chat_apply_template, llama_chat_builtin_templates and the detector.
//
// Reference values. The conversation, the Jinja template texts and the expected prompts of the first table are
// llama.cpp's tests/test-chat-template.cpp (ggml-org/llama.cpp, main_automated_tests: test_cases[].template_str
// and .expected_output, run with add_generation_prompt = true). Templates that file has no case for are checked
// against prompts written out by hand from the formatting rules of llama.cpp's src/llama-chat.cpp (second
// table); the DeepSeek-V3 one has the same shape as the "chat_example" line llama-server logs for that
// built-in template ("...assistant\n\n<｜User｜>Hello<｜Assistant｜>Hi there<｜end▁of▁sentence｜>...").
#include "harness.h"

#include "chat-conversations.h"
#include "llama-chat.h"
#include "llama.h"

#include <stdint.h>

static const struct llama_chat_message EXTRA_TOOL[] = {
    { "tool", "  72F  " },
};

struct chat_case {
    const char *                      name;
    const char *                      tmpl;     // Jinja text (table 1) or built-in name / marker snippet (table 2)
    enum llm_chat_template            expect;   // what the detector must pick for `tmpl`
    const char *                      expected; // prompt for CONV (+ extra), add_ass = true
    const struct llama_chat_message * extra;
    size_t                            n_extra;
};


// ---- table 1: llama.cpp's own test cases ------------------------------------------------------------------

static const struct chat_case UPSTREAM_CASES[] = {
    {
        "teknium/OpenHermes-2.5-Mistral-7B",
        "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}",
        LLM_CHAT_TEMPLATE_CHATML,
        "<|im_start|>system\nYou are a helpful assistant<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\nHi there<|im_end|>\n<|im_start|>user\nWho are you<|im_end|>\n<|im_start|>assistant\n   I am an assistant   <|im_end|>\n<|im_start|>user\nAnother question<|im_end|>\n<|im_start|>assistant\n",
        NULL, 0,
    },
    {
        "mistralai/Mistral-7B-Instruct-v0.2 (old pre-v1 without a system prompt)",
        "{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token}}{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %}",
        LLM_CHAT_TEMPLATE_LLAMA_2,
        "[INST] You are a helpful assistant\nHello [/INST]Hi there</s>[INST] Who are you [/INST]   I am an assistant   </s>[INST] Another question [/INST]",
        NULL, 0,
    },
    {
        "TheBloke/FusionNet_34Bx2_MoE-AWQ",
        "{%- for idx in range(0, messages|length) -%}\n{%- if messages[idx]['role'] == 'user' -%}\n{%- if idx > 1 -%}\n{{- bos_token + '[INST] ' + messages[idx]['content'] + ' [/INST]' -}}\n{%- else -%}\n{{- messages[idx]['content'] + ' [/INST]' -}}\n{%- endif -%}\n{% elif messages[idx]['role'] == 'system' %}\n{{- '[INST] <<SYS>>\\n' + messages[idx]['content'] + '\\n<</SYS>>\\n\\n' -}}\n{%- elif messages[idx]['role'] == 'assistant' -%}\n{{- ' '  + messages[idx]['content'] + ' ' + eos_token -}}\n{% endif %}\n{% endfor %}",
        LLM_CHAT_TEMPLATE_LLAMA_2_SYS_BOS,
        "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST]Hi there</s><s>[INST] Who are you [/INST]   I am an assistant   </s><s>[INST] Another question [/INST]",
        NULL, 0,
    },
    {
        "bofenghuang/vigogne-2-70b-chat",
        "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}{% elif true == true and not '<<SYS>>' in messages[0]['content'] %}{% set loop_messages = messages %}{% set system_message = 'Vous êtes Vigogne, un assistant IA créé par Zaion Lab. Vous suivez extrêmement bien les instructions. Aidez autant que vous le pouvez.' %}{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}{% for message in loop_messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if loop.index0 == 0 and system_message != false %}{% set content = '<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' + message['content'] %}{% else %}{% set content = message['content'] %}{% endif %}{% if message['role'] == 'user' %}{{ '[INST] ' + content.strip() + ' [/INST]' }}{% elif message['role'] == 'system' %}{{ '<<SYS>>\\n' + content.strip() + '\\n<</SYS>>\\n\\n' }}{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %}",
        LLM_CHAT_TEMPLATE_LLAMA_2_SYS_STRIP,
        "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST]Hi there</s>[INST] Who are you [/INST]I am an assistant</s>[INST] Another question [/INST]",
        NULL, 0,
    },
    {
        "mlabonne/AlphaMonarch-7B",
        "{% for message in messages %}{{bos_token + message['role'] + '\\n' + message['content'] + eos_token + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ bos_token + 'assistant\\n' }}{% endif %}",
        LLM_CHAT_TEMPLATE_MONARCH,
        "system\nYou are a helpful assistant</s>\n<s>user\nHello</s>\n<s>assistant\nHi there</s>\n<s>user\nWho are you</s>\n<s>assistant\n   I am an assistant   </s>\n<s>user\nAnother question</s>\n<s>assistant\n",
        NULL, 0,
    },
    {
        "google/gemma-7b-it",
        "{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\\n'}}{% endif %}",
        LLM_CHAT_TEMPLATE_GEMMA,
        "<start_of_turn>user\nYou are a helpful assistant\n\nHello<end_of_turn>\n<start_of_turn>model\nHi there<end_of_turn>\n<start_of_turn>user\nWho are you<end_of_turn>\n<start_of_turn>model\nI am an assistant<end_of_turn>\n<start_of_turn>user\nAnother question<end_of_turn>\n<start_of_turn>model\n",
        NULL, 0,
    },
    {
        "OrionStarAI/Orion-14B-Chat",
        "{% for message in messages %}{% if loop.first %}{{ bos_token }}{% endif %}{% if message['role'] == 'user' %}{{ 'Human: ' + message['content'] + '\\n\\nAssistant: ' + eos_token }}{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token }}{% endif %}{% endfor %}",
        LLM_CHAT_TEMPLATE_ORION,
        "Human: You are a helpful assistant\n\nHello\n\nAssistant: </s>Hi there</s>Human: Who are you\n\nAssistant: </s>   I am an assistant   </s>Human: Another question\n\nAssistant: </s>",
        NULL, 0,
    },
    {
        "openchat/openchat-3.5-0106",
        "{{ bos_token }}{% for message in messages %}{{ 'GPT4 Correct ' + message['role'].title() + ': ' + message['content'] + '<|end_of_turn|>'}}{% endfor %}{% if add_generation_prompt %}{{ 'GPT4 Correct Assistant:' }}{% endif %}",
        LLM_CHAT_TEMPLATE_OPENCHAT,
        "You are a helpful assistant<|end_of_turn|>GPT4 Correct User: Hello<|end_of_turn|>GPT4 Correct Assistant: Hi there<|end_of_turn|>GPT4 Correct User: Who are you<|end_of_turn|>GPT4 Correct Assistant:    I am an assistant   <|end_of_turn|>GPT4 Correct User: Another question<|end_of_turn|>GPT4 Correct Assistant:",
        NULL, 0,
    },
    {
        "deepseek-ai/deepseek-coder-33b-instruct",
        "{% if not add_generation_prompt is defined %}\n{% set add_generation_prompt = false %}\n{% endif %}\n{%- set ns = namespace(found=false) -%}\n{%- for message in messages -%}\n    {%- if message['role'] == 'system' -%}\n        {%- set ns.found = true -%}\n    {%- endif -%}\n{%- endfor -%}\n{{bos_token}}{%- if not ns.found -%}\n{{'You are an AI programming assistant, utilizing the Deepseek Coder model, developed by Deepseek Company, and you only answer questions related to computer science. For politically sensitive questions, security and privacy issues, and other non-computer science questions, you will refuse to answer\\n'}}\n{%- endif %}\n{%- for message in messages %}\n    {%- if message['role'] == 'system' %}\n{{ message['content'] }}\n    {%- else %}\n        {%- if message['role'] == 'user' %}\n{{'### Instruction:\\n' + message['content'] + '\\n'}}\n        {%- else %}\n{{'### Response:\\n' + message['content'] + '\\n<|EOT|>\\n'}}\n        {%- endif %}\n    {%- endif %}\n{%- endfor %}\n{% if add_generation_prompt %}\n{{'### Response:'}}\n{% endif %}",
        LLM_CHAT_TEMPLATE_DEEPSEEK,
        "You are a helpful assistant### Instruction:\nHello\n### Response:\nHi there\n<|EOT|>\n### Instruction:\nWho are you\n### Response:\n   I am an assistant   \n<|EOT|>\n### Instruction:\nAnother question\n### Response:\n",
        NULL, 0,
    },
    {
        "eachadea/vicuna-13b-1.1",
        "{%- for message in messages %}{%- if message['role'] == 'system' -%}{{- '' + message['content'] + '\n\n' -}}{%- else -%}{%- if message['role'] == 'user' -%}{{-'USER: ' + message['content'] + '\n'-}}{%- else -%}{{-'ASSISTANT: ' + message['content'] + '</s>\n' -}}{%- endif -%}{%- endif -%}{%- endfor -%}{%- if add_generation_prompt -%}{{-'ASSISTANT:'-}}{%- endif -%}",
        LLM_CHAT_TEMPLATE_VICUNA,
        "You are a helpful assistant\n\nUSER: Hello\nASSISTANT: Hi there</s>\nUSER: Who are you\nASSISTANT:    I am an assistant   </s>\nUSER: Another question\nASSISTANT:",
        NULL, 0,
    },
    {
        "Orca-Vicuna",
        "{%- for message in messages %}{%- if message['role'] == 'system' -%}{{-'SYSTEM: ' + message['content'] + '\n' -}}{%- else -%}{%- if message['role'] == 'user' -%}{{-'USER: ' + message['content'] + '\n'-}}{%- else -%}{{-'ASSISTANT: ' + message['content'] + '</s>\n' -}}{%- endif -%}{%- endif -%}{%- endfor -%}{%- if add_generation_prompt -%}{{-'ASSISTANT:'-}}{%- endif -%}",
        LLM_CHAT_TEMPLATE_VICUNA_ORCA,
        "SYSTEM: You are a helpful assistant\nUSER: Hello\nASSISTANT: Hi there</s>\nUSER: Who are you\nASSISTANT:    I am an assistant   </s>\nUSER: Another question\nASSISTANT:",
        NULL, 0,
    },
    {
        "CohereForAI/c4ai-command-r-plus",
        "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}{% elif false == true %}{% set loop_messages = messages %}{% set system_message = 'You are Command-R, a brilliant, sophisticated, AI-assistant trained to assist human users by providing thorough responses. You are trained by Cohere.' %}{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}{% if system_message != false %}{{ '<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>' + system_message + '<|END_OF_TURN_TOKEN|>' }}{% endif %}{% for message in loop_messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% set content = message['content'] %}{% if message['role'] == 'user' %}{{ '<|START_OF_TURN_TOKEN|><|USER_TOKEN|>' + content.strip() + '<|END_OF_TURN_TOKEN|>' }}{% elif message['role'] == 'assistant' %}{{ '<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>'  + content.strip() + '<|END_OF_TURN_TOKEN|>' }}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ '<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>' }}{% endif %}",
        LLM_CHAT_TEMPLATE_COMMAND_R,
        "<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>You are a helpful assistant<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|USER_TOKEN|>Hello<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>Hi there<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|USER_TOKEN|>Who are you<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>I am an assistant<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|USER_TOKEN|>Another question<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>",
        NULL, 0,
    },
    {
        "Llama-3",
        "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}",
        LLM_CHAT_TEMPLATE_LLAMA_3,
        "<|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHi there<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nWho are you<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nI am an assistant<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nAnother question<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
        NULL, 0,
    },
    {
        "Phi-3-mini",
        "{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') %}{{'<|user|>' + '\n' + message['content'] + '<|end|>' + '\n' + '<|assistant|>' + '\n'}}{% elif (message['role'] == 'assistant') %}{{message['content'] + '<|end|>' + '\n'}}{% endif %}{% endfor %}",
        LLM_CHAT_TEMPLATE_PHI_3, PHI3_EXPECTED, NULL, 0,
    },
    {
        "Phi-3-small",
        "{{ bos_token }}{% for message in messages %}{{'<|' + message['role'] + '|>' + '\n' + message['content'] + '<|end|>\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% else %}{{ eos_token }}{% endif %}",
        LLM_CHAT_TEMPLATE_PHI_3, PHI3_EXPECTED, NULL, 0,
    },
    {
        "Phi-3-medium",
        "{% for message in messages %}{% if (message['role'] == 'user') %}{{'<|user|>' + '\n' + message['content'] + '<|end|>' + '\n' + '<|assistant|>' + '\n'}}{% elif (message['role'] == 'assistant') %}{{message['content'] + '<|end|>' + '\n'}}{% endif %}{% endfor %}",
        LLM_CHAT_TEMPLATE_PHI_3, PHI3_EXPECTED, NULL, 0,
    },
    {
        "Phi-3-vision",
        "{% for message in messages %}{{'<|' + message['role'] + '|>' + '\n' + message['content'] + '<|end|>\n' }}{% endfor %}{% if add_generation_prompt and messages[-1]['role'] != 'assistant' %}{{- '<|assistant|>\n' -}}{% endif %}",
        LLM_CHAT_TEMPLATE_PHI_3, PHI3_EXPECTED, NULL, 0,
    },
    {
        "ChatGLM3",
        "{% for message in messages %}{% if loop.first %}[gMASK]sop<|{{ message['role'] }}|>\n {{ message['content'] }}{% else %}<|{{ message['role'] }}|>\n {{ message['content'] }}{% endif %}{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}",
        LLM_CHAT_TEMPLATE_CHATGLM_3,
        "[gMASK]sop<|system|>\n You are a helpful assistant<|user|>\n Hello<|assistant|>\n Hi there<|user|>\n Who are you<|assistant|>\n    I am an assistant   <|user|>\n Another question<|assistant|>",
        NULL, 0,
    },
    {
        "ChatGLM4",
        "[gMASK]<sop>{% for item in messages %}{% if item['tools'] is defined %}<|system|>\n你是一个名为 ChatGLM 的人工智能助手。你是基于智谱AI训练的语言模型 GLM-4 模型开发的，你的任务是针对用户的问题和要求提供适当的答复和支持。\n\n# 可用工具{% set tools = item['tools'] %}{% for tool in tools %}{% if tool['type'] == 'function' %}\n\n## {{ tool['function']['name'] }}\n\n{{ tool['function'] | tojson(indent=4) }}\n......{% endif %}{% endfor %}{% endif %}{% if item['content'] %}<|{{ item['role'] }}|>{{ item['metadata'] }}\n{{ item['content'] }}{% endif %}{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}",
        LLM_CHAT_TEMPLATE_CHATGLM_4,
        "[gMASK]<sop><|system|>\nYou are a helpful assistant<|user|>\nHello<|assistant|>\nHi there<|user|>\nWho are you<|assistant|>\n   I am an assistant   <|user|>\nAnother question<|assistant|>\n",
        NULL, 0,
    },
    {
        "GLMEdge",
        "{% for item in messages %}{% if item['role'] == 'system' %}<|system|>\n{{ item['content'] }}{% elif item['role'] == 'user' %}<|user|>\n{{ item['content'] }}{% elif item['role'] == 'assistant' %}<|assistant|>\n{{ item['content'] }}{% endif %}{% endfor %}<|assistant|>",
        LLM_CHAT_TEMPLATE_GLMEDGE,
        "<|system|>\nYou are a helpful assistant<|user|>\nHello<|assistant|>\nHi there<|user|>\nWho are you<|assistant|>\n   I am an assistant   <|user|>\nAnother question<|assistant|>",
        NULL, 0,
    },
    {
        "MiniCPM-3B-OpenHermes-2.5-v2-GGUF",
        "{% for message in messages %}{% if message['role'] == 'user' %}{{'<用户>' + message['content'].strip() + '<AI>'}}{% else %}{{message['content'].strip()}}{% endif %}{% endfor %}",
        LLM_CHAT_TEMPLATE_MINICPM,
        "You are a helpful assistant<用户>Hello<AI>Hi there<用户>Who are you<AI>I am an assistant<用户>Another question<AI>",
        NULL, 0,
    },
    {
        "DeepSeek-V2",
        "{% if not add_generation_prompt is defined %}{% set add_generation_prompt = false %}{% endif %}{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}{{ 'User: ' + message['content'] + '\n\n' }}{% elif message['role'] == 'assistant' %}{{ 'Assistant: ' + message['content'] + eos_token }}{% elif message['role'] == 'system' %}{{ message['content'] + '\n\n' }}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}",
        LLM_CHAT_TEMPLATE_DEEPSEEK_2,
        "You are a helpful assistant\n\nUser: Hello\n\nAssistant: Hi there<｜end▁of▁sentence｜>User: Who are you\n\nAssistant:    I am an assistant   <｜end▁of▁sentence｜>User: Another question\n\nAssistant:",
        NULL, 0,
    },
    {
        "ibm-granite/granite-3.0-8b-instruct",
        "{%- if tools %}\n    {{- '<|start_of_role|>available_tools<|end_of_role|>\n' }}\n    {%- for tool in tools %}\n    {{- tool | tojson(indent=4) }}\n    {%- if not loop.last %}\n        {{- '\n\n' }}\n    {%- endif %}\n    {%- endfor %}\n    {{- '<|end_of_text|>\n' }}\n{%- endif %}\n{%- for message in messages %}\n    {%- if message['role'] == 'system' %}\n    {{- '<|start_of_role|>system<|end_of_role|>' + message['content'] + '<|end_of_text|>\n' }}\n    {%- elif message['role'] == 'user' %}\n    {{- '<|start_of_role|>user<|end_of_role|>' + message['content'] + '<|end_of_text|>\n' }}\n    {%- elif message['role'] == 'assistant' %}\n    {{- '<|start_of_role|>assistant<|end_of_role|>'  + message['content'] + '<|end_of_text|>\n' }}\n    {%- elif message['role'] == 'assistant_tool_call' %}\n    {{- '<|start_of_role|>assistant<|end_of_role|><|tool_call|>' + message['content'] + '<|end_of_text|>\n' }}\n    {%- elif message['role'] == 'tool_response' %}\n    {{- '<|start_of_role|>tool_response<|end_of_role|>' + message['content'] + '<|end_of_text|>\n' }}\n    {%- endif %}\n    {%- if loop.last and add_generation_prompt %}\n    {{- '<|start_of_role|>assistant<|end_of_role|>' }}\n    {%- endif %}\n{%- endfor %}",
        LLM_CHAT_TEMPLATE_GRANITE_3_X,
        GRANITE_BASE "<|start_of_role|>assistant<|end_of_role|>",
        NULL, 0,
    },
    {
        "mistralai/Mistral-7B-Instruct-v0.2 (mistralai 'v1' template with a system prompt)",
        "{%- if messages[0]['role'] == 'system' %}\n    {%- set system_message = messages[0]['content'] %}\n    {%- set loop_messages = messages[1:] %}\n{%- else %}\n    {%- set loop_messages = messages %}\n{%- endif %}\n\n{{- bos_token }}\n{%- for message in loop_messages %}\n    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}\n        {{- raise_exception('After the optional system message, conversation roles must alternate user/assistant/user/assistant/...') }}\n    {%- endif %}\n    {%- if message['role'] == 'user' %}\n        {%- if loop.first and system_message is defined %}\n            {{- ' [INST] ' + system_message + '\\n\\n' + message['content'] + ' [/INST]' }}\n        {%- else %}\n            {{- ' [INST] ' + message['content'] + ' [/INST]' }}\n        {%- endif %}\n    {%- elif message['role'] == 'assistant' %}\n        {{- ' ' + message['content'] + eos_token}}\n    {%- else %}\n        {{- raise_exception('Only user and assistant roles are supported, with the exception of an initial optional system message!') }}\n    {%- endif %}\n{%- endfor %}\n",
        LLM_CHAT_TEMPLATE_MISTRAL_V1,
        " [INST] You are a helpful assistant\n\nHello [/INST] Hi there</s> [INST] Who are you [/INST]    I am an assistant   </s> [INST] Another question [/INST]",
        NULL, 0,
    },
    {
        "Mistral-Large-Instruct-2407 (mistralai 'v3' template; modified to have system prompt at start)",
        "{%- if messages[0][\"role\"] == \"system\" %}\n    {%- set system_message = messages[0][\"content\"] %}\n    {%- set loop_messages = messages[1:] %}\n{%- else %}\n    {%- set loop_messages = messages %}\n{%- endif %}\n{%- if not tools is defined %}\n    {%- set tools = none %}\n{%- endif %}\n{%- set user_messages = loop_messages | selectattr(\"role\", \"equalto\", \"user\") | list %}\n\n{#- This block checks for alternating user/assistant messages, skipping tool calling messages #}\n{%- set ns = namespace() %}\n{%- set ns.index = 0 %}\n{%- for message in loop_messages %}\n    {%- if not (message.role == \"tool\" or message.role == \"tool_results\" or (message.tool_calls is defined and message.tool_calls is not none)) %}\n        {%- if (message[\"role\"] == \"user\") != (ns.index % 2 == 0) %}\n            {{- raise_exception(\"After the optional system message, conversation roles must alternate user/assistant/user/assistant/...\") }}\n        {%- endif %}\n        {%- set ns.index = ns.index + 1 %}\n    {%- endif %}\n{%- endfor %}\n\n{{- bos_token }}\n{%- for message in loop_messages %}\n    {%- if message[\"role\"] == \"user\" %}\n        {%- if tools is not none and (message == user_messages[-1]) %}\n            {{- \"[AVAILABLE_TOOLS] [\" }}\n            {%- for tool in tools %}\n                {%- set tool = tool.function %}\n                {{- '{\"type\": \"function\", \"function\": {' }}\n                {%- for key, val in tool.items() if key != \"return\" %}\n                    {%- if val is string %}\n                        {{- '\"' + key + '\": \"' + val + '\"' }}\n                    {%- else %}\n                        {{- '\"' + key + '\": ' + val|tojson }}\n                    {%- endif %}\n                    {%- if not loop.last %}\n                        {{- \", \" }}\n                    {%- endif %}\n                {%- endfor %}\n                {{- \"}}\" }}\n                {%- if not loop.last %}\n                    {{- \", \" }}\n                {%- else %}\n                    {{- \"]\" }}\n                {%- endif %}\n            {%- endfor %}\n            {{- \"[/AVAILABLE_TOOLS]\" }}\n            {%- endif %}\n        {%- if loop.last and system_message is defined %}\n            {{- \"[INST] \" + system_message + \"\\n\\n\" + message[\"content\"] + \"[/INST]\" }}\n        {%- else %}\n            {{- \"[INST] \" + message[\"content\"] + \"[/INST]\" }}\n        {%- endif %}\n    {%- elif message.tool_calls is defined and message.tool_calls is not none %}\n        {{- \"[TOOL_CALLS] [\" }}\n        {%- for tool_call in message.tool_calls %}\n            {%- set out = tool_call.function|tojson %}\n            {{- out[:-1] }}\n            {%- if not tool_call.id is defined or tool_call.id|length != 9 %}\n                {{- raise_exception(\"Tool call IDs should be alphanumeric strings with length 9!\") }}\n            {%- endif %}\n            {{- ', \"id\": \"' + tool_call.id + '\"}' }}\n            {%- if not loop.last %}\n                {{- \", \" }}\n            {%- else %}\n                {{- \"]\" + eos_token }}\n            {%- endif %}\n        {%- endfor %}\n    {%- elif message[\"role\"] == \"assistant\" %}\n        {{- \" \" + message[\"content\"]|trim + eos_token}}\n    {%- elif message[\"role\"] == \"tool_results\" or message[\"role\"] == \"tool\" %}\n        {%- if message.content is defined and message.content.content is defined %}\n            {%- set content = message.content.content %}\n        {%- else %}\n            {%- set content = message.content %}\n        {%- endif %}\n        {{- '[TOOL_RESULTS] {\"content\": ' + content|string + \", \" }}\n        {%- if not message.tool_call_id is defined or message.tool_call_id|length != 9 %}\n            {{- raise_exception(\"Tool call IDs should be alphanumeric strings with length 9!\") }}\n        {%- endif %}\n        {{- '\"call_id\": \"' + message.tool_call_id + '\"}[/TOOL_RESULTS]' }}\n    {%- else %}\n        {{- raise_exception(\"Only user and assistant roles are supported, with the exception of an initial optional system message!\") }}\n    {%- endif %}\n{%- endfor %}\n",
        LLM_CHAT_TEMPLATE_MISTRAL_V3,
        "[INST] You are a helpful assistant\n\nHello[/INST] Hi there</s>[INST] Who are you[/INST] I am an assistant</s>[INST] Another question[/INST]",
        NULL, 0,
    },
    {
        "Mistral-Nemo-Instruct-2407 (mistralai 'v3-tekken' template; modified to have system prompt at start)",
        "{%- if messages[0][\"role\"] == \"system\" %}\n    {%- set system_message = messages[0][\"content\"] %}\n    {%- set loop_messages = messages[1:] %}\n{%- else %}\n    {%- set loop_messages = messages %}\n{%- endif %}\n{%- if not tools is defined %}\n    {%- set tools = none %}\n{%- endif %}\n{%- set user_messages = loop_messages | selectattr(\"role\", \"equalto\", \"user\") | list %}\n\n{#- This block checks for alternating user/assistant messages, skipping tool calling messages #}\n{%- set ns = namespace() %}\n{%- set ns.index = 0 %}\n{%- for message in loop_messages %}\n    {%- if not (message.role == \"tool\" or message.role == \"tool_results\" or (message.tool_calls is defined and message.tool_calls is not none)) %}\n        {%- if (message[\"role\"] == \"user\") != (ns.index % 2 == 0) %}\n            {{- raise_exception(\"After the optional system message, conversation roles must alternate user/assistant/user/assistant/...\") }}\n        {%- endif %}\n        {%- set ns.index = ns.index + 1 %}\n    {%- endif %}\n{%- endfor %}\n\n{{- bos_token }}\n{%- for message in loop_messages %}\n    {%- if message[\"role\"] == \"user\" %}\n        {%- if tools is not none and (message == user_messages[-1]) %}\n            {{- \"[AVAILABLE_TOOLS][\" }}\n            {%- for tool in tools %}\n                {%- set tool = tool.function %}\n                {{- '{\"type\": \"function\", \"function\": {' }}\n                {%- for key, val in tool.items() if key != \"return\" %}\n                    {%- if val is string %}\n                        {{- '\"' + key + '\": \"' + val + '\"' }}\n                    {%- else %}\n                        {{- '\"' + key + '\": ' + val|tojson }}\n                    {%- endif %}\n                    {%- if not loop.last %}\n                        {{- \", \" }}\n                    {%- endif %}\n                {%- endfor %}\n                {{- \"}}\" }}\n                {%- if not loop.last %}\n                    {{- \", \" }}\n                {%- else %}\n                    {{- \"]\" }}\n                {%- endif %}\n            {%- endfor %}\n            {{- \"[/AVAILABLE_TOOLS]\" }}\n            {%- endif %}\n        {%- if loop.last and system_message is defined %}\n            {{- \"[INST]\" + system_message + \"\\n\\n\" + message[\"content\"] + \"[/INST]\" }}\n        {%- else %}\n            {{- \"[INST]\" + message[\"content\"] + \"[/INST]\" }}\n        {%- endif %}\n    {%- elif (message.tool_calls is defined and message.tool_calls is not none) %}\n        {{- \"[TOOL_CALLS][\" }}\n        {%- for tool_call in message.tool_calls %}\n            {%- set out = tool_call.function|tojson %}\n            {{- out[:-1] }}\n            {%- if not tool_call.id is defined or tool_call.id|length != 9 %}\n                {{- raise_exception(\"Tool call IDs should be alphanumeric strings with length 9!\") }}\n            {%- endif %}\n            {{- ', \"id\": \"' + tool_call.id + '\"}' }}\n            {%- if not loop.last %}\n                {{- \", \" }}\n            {%- else %}\n                {{- \"]\" + eos_token }}\n            {%- endif %}\n        {%- endfor %}\n    {%- elif message[\"role\"] == \"assistant\" %}\n        {{- message[\"content\"] + eos_token}}\n    {%- elif message[\"role\"] == \"tool_results\" or message[\"role\"] == \"tool\" %}\n        {%- if message.content is defined and message.content.content is defined %}\n            {%- set content = message.content.content %}\n        {%- else %}\n            {%- set content = message.content %}\n        {%- endif %}\n        {{- '[TOOL_RESULTS]{\"content\": ' + content|string + \", \" }}\n        {%- if not message.tool_call_id is defined or message.tool_call_id|length != 9 %}\n            {{- raise_exception(\"Tool call IDs should be alphanumeric strings with length 9!\") }}\n        {%- endif %}\n        {{- '\"call_id\": \"' + message.tool_call_id + '\"}[/TOOL_RESULTS]' }}\n    {%- else %}\n        {{- raise_exception(\"Only user and assistant roles are supported, with the exception of an initial optional system message!\") }}\n    {%- endif %}\n{%- endfor %}\n",
        LLM_CHAT_TEMPLATE_MISTRAL_V3_TEKKEN,
        "[INST]You are a helpful assistant\n\nHello[/INST]Hi there</s>[INST]Who are you[/INST]   I am an assistant   </s>[INST]Another question[/INST]",
        NULL, 0,
    },
    {
        "mistralai/Mistral-Large-Instruct-2411 (mistralai 'v7' template)",
        "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + '[/INST]' }}{% elif message['role'] == 'system' %}{{ '[SYSTEM_PROMPT] ' + message['content'] + '[/SYSTEM_PROMPT]' }}{% elif message['role'] == 'assistant' %}{{ ' ' + message['content'] + eos_token }}{% else %}{{ raise_exception('Only user, system and assistant roles are supported!') }}{% endif %}{% endfor %}",
        LLM_CHAT_TEMPLATE_MISTRAL_V7,
        "[SYSTEM_PROMPT] You are a helpful assistant[/SYSTEM_PROMPT][INST] Hello[/INST] Hi there</s>[INST] Who are you[/INST]    I am an assistant   </s>[INST] Another question[/INST]",
        NULL, 0,
    },
    {
        "ai-sage/GigaChat-20B-A3B-instruct",
        "{% if messages[0]['role'] == 'system' -%}\n    {%- set loop_messages = messages[1:] -%}\n    {%- set system_message = bos_token + messages[0]['content'] + additional_special_tokens[1] -%}\n{%- else -%}\n    {%- set loop_messages = messages -%}\n    {%- set system_message = bos_token + '' -%}\n{%- endif -%}\n{%- for message in loop_messages %}\n    {% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}\n        {{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}\n    {% endif %}\n    \n    {%- if loop.index0 == 0 -%}\n        {{ system_message -}}\n    {%- endif -%}\n    {%- if message['role'] == 'user' -%}\n        {{ message['role'] + additional_special_tokens[0] + message['content'] + additional_special_tokens[1] -}}\n        {{ 'available functions' + additional_special_tokens[0] + additional_special_tokens[2] + additional_special_tokens[3]  + additional_special_tokens[1] -}}\n    {%- endif -%}\n    {%- if message['role'] == 'assistant' -%}\n        {{ message['role'] + additional_special_tokens[0] + message['content'] + additional_special_tokens[1] -}}\n    {%- endif -%}\n    {%- if loop.last and add_generation_prompt -%}\n        {{ 'assistant' + additional_special_tokens[0] -}}\n    {%- endif -%}\n{%- endfor %}",
        LLM_CHAT_TEMPLATE_GIGACHAT,
        "<s>You are a helpful assistant<|message_sep|>user<|role_sep|>Hello<|message_sep|>available functions<|role_sep|>[]<|message_sep|>assistant<|role_sep|>Hi there<|message_sep|>user<|role_sep|>Who are you<|message_sep|>available functions<|role_sep|>[]<|message_sep|>assistant<|role_sep|>   I am an assistant   <|message_sep|>user<|role_sep|>Another question<|message_sep|>available functions<|role_sep|>[]<|message_sep|>assistant<|role_sep|>",
        NULL, 0,
    },
    {
        "Infinigence/Megrez-3B-Instruct",
        "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|role_start|>system<|role_end|>你是Megrez-3B-Instruct，将针对用户的问题给出详细的、积极的回答。<|turn_end|>' }}{% endif %}{{ '<|role_start|>' + message['role'] + '<|role_end|>' + message['content'] + '<|turn_end|>' }}{% endfor %}{% if add_generation_prompt %}{{ '<|role_start|>assistant<|role_end|>' }}{% endif %}",
        LLM_CHAT_TEMPLATE_MEGREZ,
        "<|role_start|>system<|role_end|>You are a helpful assistant<|turn_end|><|role_start|>user<|role_end|>Hello<|turn_end|><|role_start|>assistant<|role_end|>Hi there<|turn_end|><|role_start|>user<|role_end|>Who are you<|turn_end|><|role_start|>assistant<|role_end|>   I am an assistant   <|turn_end|><|role_start|>user<|role_end|>Another question<|turn_end|><|role_start|>assistant<|role_end|>",
        NULL, 0,
    },
    {
        "phi-4",
        "{% for message in messages %}{% if (message['role'] == 'system') %}{{'<|im_start|>system<|im_sep|>' + message['content'] + '<|im_end|>'}}{% elif (message['role'] == 'user') %}{{'<|im_start|>user<|im_sep|>' + message['content'] + '<|im_end|><|im_start|>assistant<|im_sep|>'}}{% elif (message['role'] == 'assistant') %}{{message['content'] + '<|im_end|>'}}{% endif %}{% endfor %}",
        LLM_CHAT_TEMPLATE_PHI_4,
        "<|im_start|>system<|im_sep|>You are a helpful assistant<|im_end|><|im_start|>user<|im_sep|>Hello<|im_end|><|im_start|>assistant<|im_sep|>Hi there<|im_end|><|im_start|>user<|im_sep|>Who are you<|im_end|><|im_start|>assistant<|im_sep|>   I am an assistant   <|im_end|><|im_start|>user<|im_sep|>Another question<|im_end|><|im_start|>assistant<|im_sep|>",
        NULL, 0,
    },
    {
        "yandex/YandexGPT-5-Lite-8B-instruct",
        "<s>{%- set names = {'assistant': ' Ассистент:', 'user': ' Пользователь:'} %}\n{%- set tools_prefix = 'Тебе доступны следующие функции:' %}\n{%- macro __render_tool(tool) %}\n    {%- set name = tool.function.name %}\n    {%- set description = tool.function.description|default('') %}\n    {%- set parameters = tool.function.parameters|tojson %}\n    {{- '\\n' }}function {{ '{' }}'name':'{{ name }}',\n    {%- if tool.function.description %}'description':'{{ description }}',{% endif %}\n'parameters':{{ parameters }}\n    {{- '}' }}\n{%- endmacro %}\n{%- macro __render_tools(tools) %}\n    {{- tools_prefix }}\n    {%- for tool in tools %}\n        {{- __render_tool(tool) }}\n    {%- endfor %}\n    {{- '\\n\\n' }}\n{%- endmacro %}\n{%- macro __render_tool_message(message) %}\n    {{- '\\n\\nРезультат вызова' }} {{ message.name }}: {{ message.content }} {{ '\\n\\n' }}\n{%- endmacro %}\n{%- if tools -%}\n    {{- __render_tools(tools) }}\n{%- endif -%}\n{%- macro __render_user_message(message) %}\n{{ names.user }} {{ message.content + '\\n\\n' }}\n{%- endmacro %}\n{%- macro __render_assistant_message(message) %}\n    {{- names.assistant }}\n    {%- set call = message['function_call'] %}\n    {%- if call %}\n        {{- '\\n[TOOL_CALL_START]' }}{{ call.name }}{{ '\\n' }}{{ call.arguments|tojson }}\n    {%- else %}\n        {{- ' ' + message.content + '\\n\\n' }}\n    {%- endif %}\n{%- endmacro %}\n{%- if not add_generation_prompt is defined %}\n{%- set add_generation_prompt = false %}\n{%- endif %}\n{%- for message in messages %}\n    {%- if message['role'] == 'user' %}\n        {{- __render_user_message(message) }}\n    {%- endif %}\n    {%- if message.role == 'assistant' and not loop.last %}\n        {{- __render_assistant_message(message) }}\n    {%- endif %}\n    {%- if message.role == 'tool' %}\n        {{- __render_tool_message(message) }}\n    {%- endif %}\n    {%- if loop.last %}\n        {{- ' Ассистент:[SEP]' }}\n    {%- endif %}\n{%- endfor %}\n",
        LLM_CHAT_TEMPLATE_YANDEX,
        " Пользователь: Hello\n\n Ассистент: Hi there\n\n Пользователь: Who are you\n\n Ассистент:    I am an assistant   \n\n Пользователь: Another question\n\n Ассистент:[SEP]",
        NULL, 0,
    },
    {
        "inclusionAI/Ling-lite",
        "{% for message in messages %}{% set role = message['role'] | lower %}{% if role == 'user' %}{% set role = 'HUMAN' %}{% endif %}{% set role = role | upper %}{{ '<role>' + role + '</role>' + message['content'] }}{% endfor %}{% if add_generation_prompt %}{{ '<role>ASSISTANT</role>' }}{% endif %}",
        LLM_CHAT_TEMPLATE_BAILING,
        "<role>SYSTEM</role>You are a helpful assistant<role>HUMAN</role>Hello<role>ASSISTANT</role>Hi there<role>HUMAN</role>Who are you<role>ASSISTANT</role>   I am an assistant   <role>HUMAN</role>Another question<role>ASSISTANT</role>",
        NULL, 0,
    },
    {
        "ByteDance-Seed/Seed-OSS-36B-Instruct",
        "{# <seed:bos> #}{%- for message in messages %}{%- if message.role in [\"user\", \"system\"] %}{{ bos_token + message.role + \"\\n\" + message.content + eos_token }}{%- elif message.role == \"assistant\" %}{{ bos_token + message.role }}{%- if message.content is defined and message.content is string and message.content|trim|length > 0 %}{{ \"\\n\" + message.content|trim + eos_token }}{%- endif %}{%- else %}{{ bos_token + message.role + \"\\n\" + message.content + eos_token }}{%- endif %}{%- endfor %}{%- if add_generation_prompt %}{{ bos_token + \"assistant\\n\" }}{%- endif %}",
        LLM_CHAT_TEMPLATE_SEED_OSS,
        "<seed:bos>system\nYou are a helpful assistant<seed:eos><seed:bos>user\nHello<seed:eos><seed:bos>assistant\nHi there<seed:eos><seed:bos>user\nWho are you<seed:eos><seed:bos>assistant\nI am an assistant<seed:eos><seed:bos>user\nAnother question<seed:eos><seed:bos>assistant\n",
        NULL, 0,
    },
    {
        "ibm-granite/granite-3.x (tool call)",
        GRANITE_TOOL_TMPL,
        LLM_CHAT_TEMPLATE_GRANITE_3_X,
        GRANITE_BASE
        "<|start_of_role|>user<|end_of_role|>What is the weather?<|end_of_text|>\n"
        "<|start_of_role|>assistant_tool_call<|end_of_role|><|tool_call|>[{\"name\": \"get_weather\", \"arguments\": {\"location\": \"NYC\"}}]<|end_of_text|>\n"
        "<|start_of_role|>tool_response<|end_of_role|>{\"temperature\": 72}<|end_of_text|>\n"
        "<|start_of_role|>assistant<|end_of_role|>",
        EXTRA_GRANITE_3, 3,
    },
    {
        "ibm-granite/granite-4.0 (tool call)",
        GRANITE_TOOL_TMPL "\n{# <tool_call> <tools> g4_default_system_message #}",
        LLM_CHAT_TEMPLATE_GRANITE_4_0,
        GRANITE_BASE
        "<|start_of_role|>user<|end_of_role|>What is the weather?<|end_of_text|>\n"
        "<|start_of_role|>assistant<|end_of_role|><|tool_call|><tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"NYC\"}}\n</tool_call><|end_of_text|>\n"
        "<|start_of_role|>tool_response<|end_of_role|>{\"temperature\": 72}<|end_of_text|>\n"
        "<|start_of_role|>assistant<|end_of_role|>",
        EXTRA_GRANITE_4, 3,
    },
    {
        "ibm-granite/granite-4.1 (tool call)",
        GRANITE_TOOL_TMPL "\n{# <tool_call> <tools> #}",
        LLM_CHAT_TEMPLATE_GRANITE_4_1,
        GRANITE_BASE
        "<|start_of_role|>user<|end_of_role|>What is the weather?<|end_of_text|>\n"
        "<|start_of_role|>assistant<|end_of_role|><|tool_call|><tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"NYC\"}}\n</tool_call><|end_of_text|>\n"
        "<|start_of_role|>tool_response<|end_of_role|>{\"temperature\": 72}<|end_of_text|>\n"
        "<|start_of_role|>assistant<|end_of_role|>",
        EXTRA_GRANITE_4, 3,
    },
};

// ---- table 2: templates llama.cpp's test has no case for -------------------------------------------------
// `tmpl` is the built-in name; the detection snippets further down cover the Jinja side.

static const struct chat_case NAMED_CASES[] = {
    {
        "llama2-sys", "llama2-sys", LLM_CHAT_TEMPLATE_LLAMA_2_SYS,
        "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST]Hi there</s>[INST] Who are you [/INST]   I am an assistant   </s>[INST] Another question [/INST]",
        NULL, 0,
    },
    {
        "mistral-v7-tekken", "mistral-v7-tekken", LLM_CHAT_TEMPLATE_MISTRAL_V7_TEKKEN,
        "[SYSTEM_PROMPT]You are a helpful assistant[/SYSTEM_PROMPT][INST]Hello[/INST]Hi there</s>[INST]Who are you[/INST]   I am an assistant   </s>[INST]Another question[/INST]",
        NULL, 0,
    },
    {
        "zephyr", "zephyr", LLM_CHAT_TEMPLATE_ZEPHYR,
        "<|system|>\nYou are a helpful assistant<|endoftext|>\n<|user|>\nHello<|endoftext|>\n<|assistant|>\nHi there<|endoftext|>\n<|user|>\nWho are you<|endoftext|>\n<|assistant|>\n   I am an assistant   <|endoftext|>\n<|user|>\nAnother question<|endoftext|>\n<|assistant|>\n",
        NULL, 0,
    },
    {
        "falcon3", "falcon3", LLM_CHAT_TEMPLATE_FALCON_3,
        "<|system|>\nYou are a helpful assistant\n<|user|>\nHello\n<|assistant|>\nHi there\n<|user|>\nWho are you\n<|assistant|>\n   I am an assistant   \n<|user|>\nAnother question\n<|assistant|>\n",
        NULL, 0,
    },
    {
        "deepseek3", "deepseek3", LLM_CHAT_TEMPLATE_DEEPSEEK_3,
        "You are a helpful assistant\n\n<｜User｜>Hello<｜Assistant｜>Hi there<｜end▁of▁sentence｜><｜User｜>Who are you<｜Assistant｜>   I am an assistant   <｜end▁of▁sentence｜><｜User｜>Another question<｜Assistant｜>",
        NULL, 0,
    },
    {
        "deepseek-ocr", "deepseek-ocr", LLM_CHAT_TEMPLATE_DEEPSEEK_OCR,
        "You are a helpful assistantHelloHi thereWho are you   I am an assistant   Another question",
        NULL, 0,
    },
    {
        "exaone3 (drops tool messages)", "exaone3", LLM_CHAT_TEMPLATE_EXAONE_3,
        "[|system|]You are a helpful assistant[|endofturn|]\n[|user|]Hello\n[|assistant|]Hi there[|endofturn|]\n[|user|]Who are you\n[|assistant|]I am an assistant[|endofturn|]\n[|user|]Another question\n[|assistant|]",
        EXTRA_TOOL, 1,
    },
    {
        "exaone4", "exaone4", LLM_CHAT_TEMPLATE_EXAONE_4,
        "[|system|]You are a helpful assistant[|endofturn|]\n[|user|]Hello\n[|assistant|]Hi there[|endofturn|]\n[|user|]Who are you\n[|assistant|]I am an assistant[|endofturn|]\n[|user|]Another question\n[|tool|]72F[|endofturn|]\n[|assistant|]",
        EXTRA_TOOL, 1,
    },
    {
        "exaone-moe", "exaone-moe", LLM_CHAT_TEMPLATE_EXAONE_MOE,
        "<|system|>\nYou are a helpful assistant<|endofturn|>\n<|user|>\nHello<|endofturn|>\n<|assistant|>\nHi there<|endofturn|>\n<|user|>\nWho are you<|endofturn|>\n<|assistant|>\nI am an assistant<|endofturn|>\n<|user|>\nAnother question<|endofturn|>\n<|assistant|>\n",
        NULL, 0,
    },
    {
        "rwkv-world", "rwkv-world", LLM_CHAT_TEMPLATE_RWKV_WORLD,
        "System: You are a helpful assistant\n\nUser: Hello\n\nAssistant: Hi there\n\nUser: Who are you\n\nAssistant: I am an assistant\n\nUser: Another question\n\nAssistant:",
        NULL, 0,
    },
    {
        "bailing-think", "bailing-think", LLM_CHAT_TEMPLATE_BAILING_THINK,
        "<role>SYSTEM</role>You are a helpful assistant<role>HUMAN</role>Hello<role>ASSISTANT</role>Hi there<role>HUMAN</role>Who are you<role>ASSISTANT</role>   I am an assistant   <role>HUMAN</role>Another question<role>ASSISTANT</role><think>",
        NULL, 0,
    },
    {
        "bailing2", "bailing2", LLM_CHAT_TEMPLATE_BAILING2,
        "<role>SYSTEM</role>You are a helpful assistant<|role_end|><role>HUMAN</role>Hello<|role_end|><role>ASSISTANT</role>Hi there<|role_end|><role>HUMAN</role>Who are you<|role_end|><role>ASSISTANT</role>   I am an assistant   <|role_end|><role>HUMAN</role>Another question<|role_end|><role>ASSISTANT</role>",
        NULL, 0,
    },
    {
        "llama4", "llama4", LLM_CHAT_TEMPLATE_LLAMA4,
        "<|header_start|>system<|header_end|>\n\nYou are a helpful assistant<|eot|><|header_start|>user<|header_end|>\n\nHello<|eot|><|header_start|>assistant<|header_end|>\n\nHi there<|eot|><|header_start|>user<|header_end|>\n\nWho are you<|eot|><|header_start|>assistant<|header_end|>\n\nI am an assistant<|eot|><|header_start|>user<|header_end|>\n\nAnother question<|eot|><|header_start|>assistant<|header_end|>\n\n",
        NULL, 0,
    },
    {
        "smolvlm", "smolvlm", LLM_CHAT_TEMPLATE_SMOLVLM,
        "<|im_start|>You are a helpful assistant\n\nUser: Hello<end_of_utterance>\nAssistant: Hi there<end_of_utterance>\nUser: Who are you<end_of_utterance>\nAssistant:    I am an assistant   <end_of_utterance>\nUser: Another question<end_of_utterance>\nAssistant:",
        NULL, 0,
    },
    {
        "hunyuan-moe", "hunyuan-moe", LLM_CHAT_TEMPLATE_HUNYUAN_MOE,
        "<|startoftext|>You are a helpful assistant<|extra_4|><|startoftext|>Hello<|extra_0|>Hi there<|eos|><|startoftext|>Who are you<|extra_0|>   I am an assistant   <|eos|><|startoftext|>Another question<|extra_0|>",
        NULL, 0,
    },
    {
        "gpt-oss", "gpt-oss", LLM_CHAT_TEMPLATE_OPENAI_MOE,
        "<|start|>system<|message|>You are a helpful assistant<|end|><|start|>user<|message|>Hello<|end|><|start|>assistant<|message|>Hi there<|return|><|start|>user<|message|>Who are you<|end|><|start|>assistant<|message|>   I am an assistant   <|return|><|start|>user<|message|>Another question<|end|><|start|>assistant",
        NULL, 0,
    },
    {
        "hunyuan-dense", "hunyuan-dense", LLM_CHAT_TEMPLATE_HUNYUAN_DENSE,
        "You are a helpful assistant<｜hy_place▁holder▁no▁3｜><｜hy_User｜>Hello<｜hy_Assistant｜><｜hy_Assistant｜>Hi there<｜hy_place▁holder▁no▁2｜><｜hy_User｜>Who are you<｜hy_Assistant｜><｜hy_Assistant｜>   I am an assistant   <｜hy_place▁holder▁no▁2｜><｜hy_User｜>Another question<｜hy_Assistant｜>",
        NULL, 0,
    },
    {
        "hunyuan-vl", "hunyuan-vl", LLM_CHAT_TEMPLATE_HUNYUAN_VL,
        "<｜hy_begin▁of▁sentence｜>You are a helpful assistant<｜hy_place▁holder▁no▁3｜>Hello<｜hy_User｜>Hi there<｜hy_Assistant｜>Who are you<｜hy_User｜>   I am an assistant   <｜hy_Assistant｜>Another question<｜hy_User｜>",
        NULL, 0,
    },
    {
        "kimi-k2", "kimi-k2", LLM_CHAT_TEMPLATE_KIMI_K2,
        "<|im_system|>system<|im_middle|>You are a helpful assistant<|im_end|><|im_user|>user<|im_middle|>Hello<|im_end|><|im_assistant|>assistant<|im_middle|>Hi there<|im_end|><|im_user|>user<|im_middle|>Who are you<|im_end|><|im_assistant|>assistant<|im_middle|>   I am an assistant   <|im_end|><|im_user|>user<|im_middle|>Another question<|im_end|><|im_assistant|>assistant<|im_middle|>",
        NULL, 0,
    },
    {
        "grok-2", "grok-2", LLM_CHAT_TEMPLATE_GROK_2,
        "System: You are a helpful assistant<|separator|>\n\nHuman: Hello<|separator|>\n\nAssistant: Hi there<|separator|>\n\nHuman: Who are you<|separator|>\n\nAssistant:    I am an assistant   <|separator|>\n\nHuman: Another question<|separator|>\n\nAssistant:",
        NULL, 0,
    },
    {
        "pangu-embedded", "pangu-embedded", LLM_CHAT_TEMPLATE_PANGU_EMBED,
        "[unused9]系统：You are a helpful assistant[unused10][unused9]用户：Hello[unused10][unused9]助手：Hi there[unused10][unused9]用户：Who are you[unused10][unused9]助手：   I am an assistant   [unused10][unused9]用户：Another question[unused10][unused9]助手：",
        NULL, 0,
    },
    {
        "solar-open", "solar-open", LLM_CHAT_TEMPLATE_SOLAR_OPEN,
        "<|begin|>system<|content|>You are a helpful assistant<|end|><|begin|>user<|content|>Hello<|end|><|begin|>assistant<|content|>Hi there<|end|><|begin|>user<|content|>Who are you<|end|><|begin|>assistant<|content|>   I am an assistant   <|end|><|begin|>user<|content|>Another question<|end|><|begin|>assistant",
        NULL, 0,
    },
    {
        // dots.llm1 has no built-in name: only its template text selects it
        "dots1 (detected from its marker)", "{{ '<|userprompt|>' + message['content'] + '<|endofuserprompt|>' }}",
        LLM_CHAT_TEMPLATE_DOTS1,
        "<|system|>You are a helpful assistant<|endofsystem|><|userprompt|>Hello<|endofuserprompt|><|response|>Hi there<|endofresponse|><|userprompt|>Who are you<|endofuserprompt|><|response|>   I am an assistant   <|endofresponse|><|userprompt|>Another question<|endofuserprompt|><|response|>",
        NULL, 0,
    },
};

// ---- detection from template fragments ---------------------------------------------------------------------
// Fragments carrying the markers each family's real templates contain, for the families the first table does
// not already detect from a complete template.

static const struct {
    const char *           snippet;
    enum llm_chat_template expect;
} DETECT_CASES[] = {
    { "{% if message['role'] == 'user' %}{{ '<|user|>\n' + message['content'] + '<|endoftext|>\n' }}{% endif %}", LLM_CHAT_TEMPLATE_ZEPHYR },
    { "{% if message['role'] == 'user' %}{{ '<|user|>\n' + message['content'] + '\n' }}{% elif message['role'] == 'assistant' %}{{ '<|assistant|>\n' + message['content'] + '</s>\n' }}{% endif %}", LLM_CHAT_TEMPLATE_FALCON_3 },
    { "{% for item in messages %}<|{{ item['role'] }}|>\n{{ item['content'] }}{% if item['image'] %}<|begin_of_image|>{% endif %}{% endfor %}", LLM_CHAT_TEMPLATE_GLMEDGE },
    { "{{ '<|user|>\n' + content }}{{ '<|assistant|>\n' }}{{ '<|tool_declare|>' }}", LLM_CHAT_TEMPLATE_EXAONE_MOE },
    { "{{'<｜User｜>' + message['content']}}{{'<｜Assistant｜>' + content + '<｜end▁of▁sentence｜>'}}", LLM_CHAT_TEMPLATE_DEEPSEEK_3 },
    { "{{ '[|system|]' + content + '[|endofturn|]\n' }}{{ '[|assistant|]' + content + '[|endofturn|]\n' }}", LLM_CHAT_TEMPLATE_EXAONE_3 },
    { "{{ '[|system|]' + c + '[|endofturn|]\n' }}{{ '[|tool|]' + c }}{{ '[|assistant|]' }}", LLM_CHAT_TEMPLATE_EXAONE_4 },
    { "{%- if message['role'] == 'user' -%}{{- 'User: ' + message['content']|trim + '\\n\\n' -}}{%- endif -%}", LLM_CHAT_TEMPLATE_RWKV_WORLD },
    { "{# rwkv-world #}", LLM_CHAT_TEMPLATE_RWKV_WORLD },
    { "{% set role = \"HUMAN\" %}{{ '<role>' + role + '</role>' }}{{ '<role>ASSISTANT</role>' }}<think>", LLM_CHAT_TEMPLATE_BAILING_THINK },
    { "{{ '<role>HUMAN</role>' + c + '<|role_end|>' }}{{ '<role>ASSISTANT</role>' }}", LLM_CHAT_TEMPLATE_BAILING2 },
    { "{{ '<|header_start|>' + message['role'] + '<|header_end|>\\n\\n' }}", LLM_CHAT_TEMPLATE_LLAMA4 },
    { "<|im_start|>{% for m in messages %}{{ m['content'] }}<end_of_utterance>\n{% endfor %}", LLM_CHAT_TEMPLATE_SMOLVLM },
    { "{{ '<|startoftext|>' + c + '<|extra_4|>' }}{{ '<|startoftext|>' + c + '<|extra_0|>' }}", LLM_CHAT_TEMPLATE_HUNYUAN_MOE },
    { "{{ '<|start|>assistant<|channel|>final<|message|>' }}", LLM_CHAT_TEMPLATE_OPENAI_MOE },
    { "{{ '<｜hy_begin▁of▁sentence｜>' }}{{ c + '<｜hy_Assistant｜>' }}", LLM_CHAT_TEMPLATE_HUNYUAN_VL },
    { "{{ c + '<｜hy_place▁holder▁no▁3｜>' }}{{ '<｜hy_Assistant｜>' }}", LLM_CHAT_TEMPLATE_HUNYUAN_DENSE },
    { "{{ '<|im_assistant|>assistant<|im_middle|>' }}", LLM_CHAT_TEMPLATE_KIMI_K2 },
    { "{{ 'Assistant: '  + message['content'] + '<|separator|>\\n\\n' }}", LLM_CHAT_TEMPLATE_GROK_2 },
    { "{{ '[unused9]系统：[unused10]' }}", LLM_CHAT_TEMPLATE_PANGU_EMBED },
    { "{{ '<|begin|>' + m.role + '<|content|>' + m.content + '<|end|>' }}", LLM_CHAT_TEMPLATE_SOLAR_OPEN },
    // a template text that merely starts with "mistral" belongs to the [INST] family
    { "mistral-custom", LLM_CHAT_TEMPLATE_LLAMA_2 },
    { "{{ '[INST] <<SYS>>\\n' + system + '\\n<</SYS>>\\n\\n' }}", LLM_CHAT_TEMPLATE_LLAMA_2_SYS },
    // first rule wins when markers of two families meet
    { "<|im_start|>[INST]<start_of_turn>", LLM_CHAT_TEMPLATE_CHATML },
    // names match exactly, not by prefix or case
    { "ChatML", LLM_CHAT_TEMPLATE_UNKNOWN },
    { "chatml ", LLM_CHAT_TEMPLATE_UNKNOWN },
    { "", LLM_CHAT_TEMPLATE_UNKNOWN },
    { "{{ messages }}", LLM_CHAT_TEMPLATE_UNKNOWN },
};

// ---- helpers -----------------------------------------------------------------------------------------------

// CONV followed by `extra`, in a static buffer
static const struct llama_chat_message * conversation(const struct llama_chat_message * extra, size_t n_extra,
                                                      size_t * n) {
    static struct llama_chat_message msgs[16];
    memcpy(msgs, CONV, sizeof(CONV));
    for (size_t i = 0; i < n_extra; i++) {
        msgs[N_CONV + i] = extra[i];
    }
    *n = N_CONV + n_extra;
    return msgs;
}

// formats through the public API the way callers do: size query first, then a buffer of that size
static char * format(const char * tmpl, const struct llama_chat_message * msgs, size_t n, bool add_ass,
                     int32_t * res) {
    *res = llama_chat_apply_template(tmpl, msgs, n, add_ass, NULL, 0);
    if (*res < 0) {
        return NULL;
    }
    char * buf = malloc((size_t) *res + 1);
    const int32_t again = llama_chat_apply_template(tmpl, msgs, n, add_ass, buf, *res + 1);
    if (again != *res) {
        *res = -2;
        free(buf);
        return NULL;
    }
    return buf;
}

static void check_case(const struct chat_case * tc) {
    const enum llm_chat_template got = llm_chat_detect_template(tc->tmpl);
    TH_CHECK(got == tc->expect, "%s: detected template %d, expected %d", tc->name, (int) got, (int) tc->expect);

    size_t n;
    const struct llama_chat_message * msgs = conversation(tc->extra, tc->n_extra, &n);
    int32_t res;
    char * out = format(tc->tmpl, msgs, n, true, &res);
    const bool ok = out != NULL && res == (int32_t) strlen(tc->expected) && strcmp(out, tc->expected) == 0;
    TH_CHECK(ok, "%s: result %d\n  expected: [%s]\n  actual:   [%s]", tc->name, res, tc->expected, out ? out : "(null)");
    free(out);
}

// ---- tests -------------------------------------------------------------------------------------------------

static void test_reference_prompts(void) {
    for (size_t i = 0; i < sizeof(UPSTREAM_CASES) / sizeof(UPSTREAM_CASES[0]); i++) {
        check_case(&UPSTREAM_CASES[i]);
    }
    for (size_t i = 0; i < sizeof(NAMED_CASES) / sizeof(NAMED_CASES[0]); i++) {
        check_case(&NAMED_CASES[i]);
    }
}

static void test_detection(void) {
    for (size_t i = 0; i < sizeof(DETECT_CASES) / sizeof(DETECT_CASES[0]); i++) {
        const enum llm_chat_template got = llm_chat_detect_template(DETECT_CASES[i].snippet);
        TH_CHECK(got == DETECT_CASES[i].expect, "snippet [%s]: detected %d, expected %d", DETECT_CASES[i].snippet,
                 (int) got, (int) DETECT_CASES[i].expect);
    }
    TH_CHECK(llm_chat_detect_template(NULL) == LLM_CHAT_TEMPLATE_UNKNOWN, "NULL template text");
    TH_CHECK(llm_chat_template_from_str("[INST]") == LLM_CHAT_TEMPLATE_UNKNOWN, "from_str takes names only");
    TH_CHECK(llm_chat_template_from_str("mistral-v3-tekken") == LLM_CHAT_TEMPLATE_MISTRAL_V3_TEKKEN, "name lookup");
}

// the template set has one name per formatter, so formatting by name must equal formatting by the Jinja text
// that detects to the same template
static void test_name_equals_jinja(void) {
    static const struct { const char * name; size_t upstream_idx; } pairs[] = {
        { "chatml", 0 }, { "llama2", 1 }, { "llama2-sys-bos", 2 }, { "llama2-sys-strip", 3 }, { "monarch", 4 },
        { "gemma", 5 }, { "orion", 6 }, { "openchat", 7 }, { "deepseek", 8 }, { "vicuna", 9 },
        { "vicuna-orca", 10 }, { "command-r", 11 }, { "llama3", 12 }, { "phi3", 13 }, { "chatglm3", 17 },
        { "chatglm4", 18 }, { "glmedge", 19 }, { "minicpm", 20 }, { "deepseek2", 21 }, { "granite", 22 },
        { "mistral-v1", 23 }, { "mistral-v3", 24 }, { "mistral-v3-tekken", 25 }, { "mistral-v7", 26 },
        { "gigachat", 27 }, { "megrez", 28 }, { "phi4", 29 }, { "yandex", 30 }, { "bailing", 31 },
        { "seed_oss", 32 }, { "granite-4.0", 34 }, { "granite-4.1", 35 },
    };
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        const struct chat_case * tc = &UPSTREAM_CASES[pairs[i].upstream_idx];
        TH_CHECK(llm_chat_template_from_str(pairs[i].name) == tc->expect, "name %s maps to the template of '%s'",
                 pairs[i].name, tc->name);
        size_t n;
        const struct llama_chat_message * msgs = conversation(tc->extra, tc->n_extra, &n);
        int32_t res;
        char * out = format(pairs[i].name, msgs, n, true, &res);
        TH_CHECK(out != NULL && strcmp(out, tc->expected) == 0, "%s by name: [%s]", pairs[i].name, out ? out : "(null)");
        free(out);
    }
}

static void expect_prompt(const char * tmpl, const struct llama_chat_message * msgs, size_t n, bool add_ass,
                          const char * expected) {
    int32_t res;
    char * out = format(tmpl, msgs, n, add_ass, &res);
    TH_CHECK(out != NULL && strcmp(out, expected) == 0, "%s (n=%zu add_ass=%d)\n  expected: [%s]\n  actual:   [%s]",
             tmpl, n, (int) add_ass, expected, out ? out : "(null)");
    free(out);
}

// add_ass = false and short conversations: the quirks of templates whose prefix is not simply appended
static void test_add_ass_and_edges(void) {
    const struct llama_chat_message * c = CONV;
    expect_prompt("chatml", c, 2, false, "<|im_start|>system\nYou are a helpful assistant<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n");
    expect_prompt("chatml", c, 0, true, "<|im_start|>assistant\n");
    expect_prompt("chatml", c, 0, false, "");
    expect_prompt(NULL, c + 1, 1, true, "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n"); // NULL = chatml
    // RWKV World appends the assistant prefix after a final user turn even without add_ass ...
    expect_prompt("rwkv-world", c + 1, 1, false, "User: Hello\n\nAssistant:");
    // ... and not after a final assistant turn
    expect_prompt("rwkv-world", c + 1, 2, true, "User: Hello\n\nAssistant: Hi there\n\n");
    expect_prompt("bailing-think", c + 1, 1, false, "<role>HUMAN</role>Hello");
    // Ling 2.0 switches thinking off when there is no system message
    expect_prompt("bailing2", c + 1, 1, true, "<role>SYSTEM</role>detailed thinking off<|role_end|><role>HUMAN</role>Hello<|role_end|><role>ASSISTANT</role>");
    // Monarch: no BOS before the first message, whatever its role
    expect_prompt("monarch", c + 1, 2, false, "user\nHello</s>\n<s>assistant\nHi there</s>\n");
    // Gemma: several system messages are trimmed and joined, then given to the first user turn
    static const struct llama_chat_message two_sys[] = {
        { "system", " A " }, { "system", "B\n" }, { "assistant", "x" }, { "user", "q" },
    };
    expect_prompt("gemma", two_sys, 4, false, "<start_of_turn>model\nx<end_of_turn>\n<start_of_turn>user\nAB\n\nq<end_of_turn>\n");
    // GigaChat keeps only a leading system message
    static const struct llama_chat_message late_sys[] = { { "user", "u" }, { "system", "s" } };
    expect_prompt("gigachat", late_sys, 2, false, "<s>user<|role_sep|>u<|message_sep|>available functions<|role_sep|>[]<|message_sep|>");
    // Pangu supplies an empty system turn
    expect_prompt("pangu-embedded", c + 1, 1, false, "[unused9]系统：[unused10][unused9]用户：Hello[unused10]");
    // OpenChat capitalises only the first byte of a role, and an empty role stays empty
    static const struct llama_chat_message odd_roles[] = { { "tool", "t" }, { "", "e" } };
    expect_prompt("openchat", odd_roles, 2, false, "GPT4 Correct Tool: t<|end_of_turn|>GPT4 Correct : e<|end_of_turn|>");
    // Llama 2 without <<SYS>> support keeps the system text as a plain first line
    expect_prompt("llama2", c, 2, false, "[INST] You are a helpful assistant\nHello [/INST]");
    // trimming strips exactly the C-locale spaces
    static const struct llama_chat_message spaces[] = { { "user", "\t\v\f\r\n x \n\r\f\v\t" } };
    expect_prompt("llama3", spaces, 1, false, "<|start_header_id|>user<|end_header_id|>\n\nx<|eot_id|>");
    static const struct llama_chat_message blank[] = { { "user", " \n " } };
    expect_prompt("llama3", blank, 1, false, "<|start_header_id|>user<|end_header_id|>\n\n<|eot_id|>");
}

// the return value is the full length; the buffer gets strncpy's copy (no terminator when truncated, zero
// padding when short)
static void test_buffer_semantics(void) {
    const char * full = "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n";
    const int32_t len = (int32_t) strlen(full);
    char buf[128];

    TH_CHECK(llama_chat_apply_template("chatml", CONV + 1, 1, true, NULL, 0) == len, "size query without a buffer");
    TH_CHECK(llama_chat_apply_template("chatml", CONV + 1, 1, true, NULL, 100) == len, "NULL buffer with a length");

    memset(buf, '#', sizeof(buf));
    TH_CHECK(llama_chat_apply_template("chatml", CONV + 1, 1, true, buf, 0) == len, "length 0");
    TH_CHECK(buf[0] == '#', "length 0 writes nothing");
    TH_CHECK(llama_chat_apply_template("chatml", CONV + 1, 1, true, buf, -5) == len, "negative length");
    TH_CHECK(buf[0] == '#', "negative length writes nothing");

    memset(buf, '#', sizeof(buf));
    TH_CHECK(llama_chat_apply_template("chatml", CONV + 1, 1, true, buf, 10) == len, "truncated call returns the full length");
    TH_CHECK(memcmp(buf, full, 10) == 0 && buf[10] == '#', "truncated copy: 10 bytes, no terminator");

    memset(buf, '#', sizeof(buf));
    TH_CHECK(llama_chat_apply_template("chatml", CONV + 1, 1, true, buf, len) == len, "exact length");
    TH_CHECK(memcmp(buf, full, (size_t) len) == 0 && buf[len] == '#', "exact fit has no room for the terminator");

    memset(buf, '#', sizeof(buf));
    TH_CHECK(llama_chat_apply_template("chatml", CONV + 1, 1, true, buf, len + 8) == len, "roomy buffer");
    bool padded = strcmp(buf, full) == 0;
    for (int32_t i = len; i < len + 8; i++) {
        padded = padded && buf[i] == '\0';
    }
    TH_CHECK(padded && buf[len + 8] == '#', "short copy is zero-padded to `length` and no further");

    // a prompt over the recommended 2x size still comes back whole after the size query
    static char big[5000];
    memset(big, 'z', sizeof(big) - 1);
    const struct llama_chat_message big_msg[] = { { "user", big } };
    int32_t res;
    char * out = format("llama3", big_msg, 1, true, &res);
    TH_CHECK(out != NULL && res == (int32_t) (strlen("<|start_header_id|>user<|end_header_id|>\n\n<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n") + sizeof(big) - 1),
             "large prompt length %d", res);
    free(out);
}

static void test_bad_input(void) {
    char buf[64];
    memset(buf, '#', sizeof(buf));
    TH_CHECK(llama_chat_apply_template("INVALID TEMPLATE", CONV, N_CONV, true, buf, (int32_t) sizeof(buf)) == -1,
             "unknown template is -1");
    TH_CHECK(buf[0] == '#', "unknown template writes nothing");
    TH_CHECK(llama_chat_apply_template("{{ messages }}", CONV, N_CONV, true, buf, (int32_t) sizeof(buf)) == -1,
             "Jinja text without known markers is -1");

    static const struct llama_chat_message null_role[]    = { { NULL, "x" } };
    static const struct llama_chat_message null_content[] = { { "user", NULL } };
    TH_CHECK(llama_chat_apply_template("chatml", null_role, 1, true, buf, (int32_t) sizeof(buf)) == -1, "NULL role");
    TH_CHECK(llama_chat_apply_template("chatml", null_content, 1, true, buf, (int32_t) sizeof(buf)) == -1, "NULL content");
    TH_CHECK(llama_chat_apply_template("chatml", NULL, 3, true, buf, (int32_t) sizeof(buf)) == -1, "NULL chat with n_msg > 0");
    TH_CHECK(llama_chat_apply_template("chatml", NULL, 0, true, buf, (int32_t) sizeof(buf)) == (int32_t) strlen("<|im_start|>assistant\n"),
             "NULL chat with n_msg = 0 is an empty conversation");
}

static void test_builtin_list(void) {
    const int32_t n = llama_chat_builtin_templates(NULL, 0);
    TH_CHECK(n >= 50, "%d built-in templates", n);
    if (n <= 0 || n > 1000) {
        return;
    }
    const char ** names = calloc((size_t) n + 1, sizeof(*names));
    names[n] = "sentinel";
    TH_CHECK(llama_chat_builtin_templates(names, (size_t) n + 1) == n, "count is stable");
    TH_CHECK(strcmp(names[n], "sentinel") == 0, "no write past the list");

    bool sorted = true;
    bool all_known = true;
    for (int32_t i = 0; i < n; i++) {
        sorted = sorted && (i == 0 || strcmp(names[i - 1], names[i]) < 0);
        if (llm_chat_template_from_str(names[i]) == LLM_CHAT_TEMPLATE_UNKNOWN ||
            llm_chat_detect_template(names[i]) != llm_chat_template_from_str(names[i])) {
            all_known = false;
            fprintf(stderr, "name %s does not resolve\n", names[i]);
        }
        // every listed template formats (a name whose formatter were missing would return -1)
        const int32_t r = llama_chat_apply_template(names[i], CONV, N_CONV, true, NULL, 0);
        TH_EXPECT(r > 0, "template %s formats to %d", names[i], r);
    }
    TH_CHECK(sorted, "names are in byte order, as llama.cpp's std::map lists them");
    TH_CHECK(all_known, "every listed name resolves to its template");

    // the names llama.cpp documents for --chat-template
    static const char * const required[] = {
        "chatml", "llama2", "llama2-sys", "llama2-sys-bos", "llama2-sys-strip", "mistral-v1", "mistral-v3",
        "mistral-v3-tekken", "mistral-v7", "mistral-v7-tekken", "phi3", "phi4", "falcon3", "zephyr", "monarch",
        "gemma", "orion", "openchat", "vicuna", "vicuna-orca", "deepseek", "deepseek2", "deepseek3", "command-r",
        "llama3", "chatglm3", "chatglm4", "glmedge", "minicpm", "exaone3", "exaone4", "rwkv-world", "granite",
        "gigachat", "megrez", "yandex", "bailing", "bailing-think", "bailing2", "llama4", "smolvlm", "hunyuan-moe",
        "gpt-oss", "hunyuan-dense", "kimi-k2", "seed_oss", "grok-2", "pangu-embedded",
    };
    for (size_t r = 0; r < sizeof(required) / sizeof(required[0]); r++) {
        bool found = false;
        for (int32_t i = 0; i < n && !found; i++) {
            found = strcmp(names[i], required[r]) == 0;
        }
        TH_EXPECT(found, "built-in list lacks %s", required[r]);
    }

    // a short output array receives only the first `len` names, the count stays the total
    const char * few[4] = { NULL, NULL, NULL, "untouched" };
    TH_CHECK(llama_chat_builtin_templates(few, 3) == n, "short array still reports the total");
    TH_CHECK(few[0] == names[0] && few[2] == names[2] && strcmp(few[3], "untouched") == 0, "short array filled in order");
    free(names);
}

int main(void) {
    test_reference_prompts();
    test_detection();
    test_name_equals_jinja();
    test_add_ass_and_edges();
    test_buffer_semantics();
    test_bad_input();
    test_builtin_list();
    return th_finish();
}

// Real chat templates through the Jinja interpreter (common/chat-template-jinja), against llama.cpp's own outputs.
//
// Reference values: the conversation, template texts, bos/eos tokens and expected prompts are llama.cpp's
// tests/test-chat-template.cpp (ggml-org/llama.cpp, main_automated_tests: test_cases[], rendered through
// format_using_common with use_jinja = true and add_generation_prompt = true; .expected_output_jinja when set,
// else .expected_output). Cases where llama.cpp expects the same text from the built-in formatter and from Jinja
// (no .expected_output_jinja) are also compared with our llama_chat_apply_template on the same conversation.
// GigaChat is skipped as upstream does (supported_with_jinja = false: it needs additional_special_tokens).
#include "harness.h"

#include "chat-conversations.h"
#include "chat-template-jinja.h"
#include "llama.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


// Phi-3-mini / Phi-3-medium: the template ignores system messages, so the system text is merged into the first
// user message (llama.cpp's expected_output_jinja)
#define PHI3_JINJA                                                                                                           \
    "<|user|>\nYou are a helpful assistant\nHello<|end|>\n<|assistant|>\nHi there<|end|>\n<|user|>\nWho are you<|end|>\n<|assistant|>\n   I am an assistant   <|end|>\n<|user|>\nAnother question<|end|>\n<|assistant|>\n"

struct jinja_case {
    const char *                      name;
    const char *                      tmpl;
    const char *                      expected;
    const char *                      bos;
    const char *                      eos;
    const struct llama_chat_message * extra;
    size_t                            n_extra;
    bool                              builtin_agrees; // llama.cpp expects the built-in formatter to give the same
    bool                              supported;
};

static const struct jinja_case CASES[] = {
    {
        "teknium/OpenHermes-2.5-Mistral-7B",
        "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}",
        "<|im_start|>system\nYou are a helpful assistant<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\nHi there<|im_end|>\n<|im_start|>user\nWho are you<|im_end|>\n<|im_start|>assistant\n   I am an assistant   <|im_end|>\n<|im_start|>user\nAnother question<|im_end|>\n<|im_start|>assistant\n",
        "", "", NULL, 0, true, true,
    },
    {
        "mistralai/Mistral-7B-Instruct-v0.2 (old pre-v1 without a system prompt)",
        "{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token}}{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %}",
        "[INST] You are a helpful assistant\nHello [/INST]Hi there</s>[INST] Who are you [/INST]   I am an assistant   </s>[INST] Another question [/INST]",
        "", "</s>", NULL, 0, true, true,
    },
    {
        "TheBloke/FusionNet_34Bx2_MoE-AWQ",
        "{%- for idx in range(0, messages|length) -%}\n{%- if messages[idx]['role'] == 'user' -%}\n{%- if idx > 1 -%}\n{{- bos_token + '[INST] ' + messages[idx]['content'] + ' [/INST]' -}}\n{%- else -%}\n{{- messages[idx]['content'] + ' [/INST]' -}}\n{%- endif -%}\n{% elif messages[idx]['role'] == 'system' %}\n{{- '[INST] <<SYS>>\\n' + messages[idx]['content'] + '\\n<</SYS>>\\n\\n' -}}\n{%- elif messages[idx]['role'] == 'assistant' -%}\n{{- ' '  + messages[idx]['content'] + ' ' + eos_token -}}\n{% endif %}\n{% endfor %}",
        "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST] Hi there </s><s>[INST] Who are you [/INST]    I am an assistant    </s><s>[INST] Another question [/INST]",
        "<s>", "</s>", NULL, 0, false, true,
    },
    {
        "bofenghuang/vigogne-2-70b-chat",
        "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}{% elif true == true and not '<<SYS>>' in messages[0]['content'] %}{% set loop_messages = messages %}{% set system_message = 'Vous êtes Vigogne, un assistant IA créé par Zaion Lab. Vous suivez extrêmement bien les instructions. Aidez autant que vous le pouvez.' %}{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}{% for message in loop_messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if loop.index0 == 0 and system_message != false %}{% set content = '<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' + message['content'] %}{% else %}{% set content = message['content'] %}{% endif %}{% if message['role'] == 'user' %}{{ '[INST] ' + content.strip() + ' [/INST]' }}{% elif message['role'] == 'system' %}{{ '<<SYS>>\\n' + content.strip() + '\\n<</SYS>>\\n\\n' }}{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %}",
        "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST] Hi there </s>[INST] Who are you [/INST] I am an assistant </s>[INST] Another question [/INST]",
        "", "</s>", NULL, 0, false, true,
    },
    {
        "mlabonne/AlphaMonarch-7B",
        "{% for message in messages %}{{bos_token + message['role'] + '\\n' + message['content'] + eos_token + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ bos_token + 'assistant\\n' }}{% endif %}",
        "<s>system\nYou are a helpful assistant</s>\n<s>user\nHello</s>\n<s>assistant\nHi there</s>\n<s>user\nWho are you</s>\n<s>assistant\n   I am an assistant   </s>\n<s>user\nAnother question</s>\n<s>assistant\n",
        "<s>", "</s>", NULL, 0, false, true,
    },
    {
        "google/gemma-7b-it",
        "{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\\n'}}{% endif %}",
        "<start_of_turn>user\nYou are a helpful assistant\nHello<end_of_turn>\n<start_of_turn>model\nHi there<end_of_turn>\n<start_of_turn>user\nWho are you<end_of_turn>\n<start_of_turn>model\nI am an assistant<end_of_turn>\n<start_of_turn>user\nAnother question<end_of_turn>\n<start_of_turn>model\n",
        "", "", NULL, 0, false, true,
    },
    {
        "OrionStarAI/Orion-14B-Chat",
        "{% for message in messages %}{% if loop.first %}{{ bos_token }}{% endif %}{% if message['role'] == 'user' %}{{ 'Human: ' + message['content'] + '\\n\\nAssistant: ' + eos_token }}{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token }}{% endif %}{% endfor %}",
        "Human: You are a helpful assistant\nHello\n\nAssistant: </s>Hi there</s>Human: Who are you\n\nAssistant: </s>   I am an assistant   </s>Human: Another question\n\nAssistant: </s>",
        "", "</s>", NULL, 0, false, true,
    },
    {
        "openchat/openchat-3.5-0106",
        "{{ bos_token }}{% for message in messages %}{{ 'GPT4 Correct ' + message['role'].title() + ': ' + message['content'] + '<|end_of_turn|>'}}{% endfor %}{% if add_generation_prompt %}{{ 'GPT4 Correct Assistant:' }}{% endif %}",
        "GPT4 Correct System: You are a helpful assistant<|end_of_turn|>GPT4 Correct User: Hello<|end_of_turn|>GPT4 Correct Assistant: Hi there<|end_of_turn|>GPT4 Correct User: Who are you<|end_of_turn|>GPT4 Correct Assistant:    I am an assistant   <|end_of_turn|>GPT4 Correct User: Another question<|end_of_turn|>GPT4 Correct Assistant:",
        "", "", NULL, 0, false, true,
    },
    {
        "deepseek-ai/deepseek-coder-33b-instruct",
        "{% if not add_generation_prompt is defined %}\n{% set add_generation_prompt = false %}\n{% endif %}\n{%- set ns = namespace(found=false) -%}\n{%- for message in messages -%}\n    {%- if message['role'] == 'system' -%}\n        {%- set ns.found = true -%}\n    {%- endif -%}\n{%- endfor -%}\n{{bos_token}}{%- if not ns.found -%}\n{{'You are an AI programming assistant, utilizing the Deepseek Coder model, developed by Deepseek Company, and you only answer questions related to computer science. For politically sensitive questions, security and privacy issues, and other non-computer science questions, you will refuse to answer\\n'}}\n{%- endif %}\n{%- for message in messages %}\n    {%- if message['role'] == 'system' %}\n{{ message['content'] }}\n    {%- else %}\n        {%- if message['role'] == 'user' %}\n{{'### Instruction:\\n' + message['content'] + '\\n'}}\n        {%- else %}\n{{'### Response:\\n' + message['content'] + '\\n<|EOT|>\\n'}}\n        {%- endif %}\n    {%- endif %}\n{%- endfor %}\n{% if add_generation_prompt %}\n{{'### Response:'}}\n{% endif %}",
        "You are a helpful assistant### Instruction:\nHello\n### Response:\nHi there\n<|EOT|>\n### Instruction:\nWho are you\n### Response:\n   I am an assistant   \n<|EOT|>\n### Instruction:\nAnother question\n### Response:\n",
        "", "", NULL, 0, true, true,
    },
    {
        "eachadea/vicuna-13b-1.1",
        "{%- for message in messages %}{%- if message['role'] == 'system' -%}{{- '' + message['content'] + '\n\n' -}}{%- else -%}{%- if message['role'] == 'user' -%}{{-'USER: ' + message['content'] + '\n'-}}{%- else -%}{{-'ASSISTANT: ' + message['content'] + '</s>\n' -}}{%- endif -%}{%- endif -%}{%- endfor -%}{%- if add_generation_prompt -%}{{-'ASSISTANT:'-}}{%- endif -%}",
        "You are a helpful assistant\n\nUSER: Hello\nASSISTANT: Hi there</s>\nUSER: Who are you\nASSISTANT:    I am an assistant   </s>\nUSER: Another question\nASSISTANT:",
        "", "", NULL, 0, true, true,
    },
    {
        "Orca-Vicuna",
        "{%- for message in messages %}{%- if message['role'] == 'system' -%}{{-'SYSTEM: ' + message['content'] + '\n' -}}{%- else -%}{%- if message['role'] == 'user' -%}{{-'USER: ' + message['content'] + '\n'-}}{%- else -%}{{-'ASSISTANT: ' + message['content'] + '</s>\n' -}}{%- endif -%}{%- endif -%}{%- endfor -%}{%- if add_generation_prompt -%}{{-'ASSISTANT:'-}}{%- endif -%}",
        "SYSTEM: You are a helpful assistant\nUSER: Hello\nASSISTANT: Hi there</s>\nUSER: Who are you\nASSISTANT:    I am an assistant   </s>\nUSER: Another question\nASSISTANT:",
        "", "", NULL, 0, true, true,
    },
    {
        "CohereForAI/c4ai-command-r-plus",
        "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}{% elif false == true %}{% set loop_messages = messages %}{% set system_message = 'You are Command-R, a brilliant, sophisticated, AI-assistant trained to assist human users by providing thorough responses. You are trained by Cohere.' %}{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}{% if system_message != false %}{{ '<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>' + system_message + '<|END_OF_TURN_TOKEN|>' }}{% endif %}{% for message in loop_messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% set content = message['content'] %}{% if message['role'] == 'user' %}{{ '<|START_OF_TURN_TOKEN|><|USER_TOKEN|>' + content.strip() + '<|END_OF_TURN_TOKEN|>' }}{% elif message['role'] == 'assistant' %}{{ '<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>'  + content.strip() + '<|END_OF_TURN_TOKEN|>' }}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ '<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>' }}{% endif %}",
        "<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>You are a helpful assistant<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|USER_TOKEN|>Hello<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>Hi there<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|USER_TOKEN|>Who are you<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>I am an assistant<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|USER_TOKEN|>Another question<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>",
        "", "", NULL, 0, true, true,
    },
    {
        "Llama-3",
        "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}",
        "<|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHi there<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nWho are you<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nI am an assistant<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nAnother question<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
        "", "", NULL, 0, true, true,
    },
    {
        "Phi-3-mini",
        "{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') %}{{'<|user|>' + '\n' + message['content'] + '<|end|>' + '\n' + '<|assistant|>' + '\n'}}{% elif (message['role'] == 'assistant') %}{{message['content'] + '<|end|>' + '\n'}}{% endif %}{% endfor %}",
        PHI3_JINJA,
        "", "", NULL, 0, false, true,
    },
    {
        "Phi-3-small",
        "{{ bos_token }}{% for message in messages %}{{'<|' + message['role'] + '|>' + '\n' + message['content'] + '<|end|>\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% else %}{{ eos_token }}{% endif %}",
        PHI3_EXPECTED,
        "", "", NULL, 0, true, true,
    },
    {
        "Phi-3-medium",
        "{% for message in messages %}{% if (message['role'] == 'user') %}{{'<|user|>' + '\n' + message['content'] + '<|end|>' + '\n' + '<|assistant|>' + '\n'}}{% elif (message['role'] == 'assistant') %}{{message['content'] + '<|end|>' + '\n'}}{% endif %}{% endfor %}",
        PHI3_JINJA,
        "", "", NULL, 0, false, true,
    },
    {
        "Phi-3-vision",
        "{% for message in messages %}{{'<|' + message['role'] + '|>' + '\n' + message['content'] + '<|end|>\n' }}{% endfor %}{% if add_generation_prompt and messages[-1]['role'] != 'assistant' %}{{- '<|assistant|>\n' -}}{% endif %}",
        PHI3_EXPECTED,
        "", "", NULL, 0, true, true,
    },
    {
        "ChatGLM3",
        "{% for message in messages %}{% if loop.first %}[gMASK]sop<|{{ message['role'] }}|>\n {{ message['content'] }}{% else %}<|{{ message['role'] }}|>\n {{ message['content'] }}{% endif %}{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}",
        "[gMASK]sop<|system|>\n You are a helpful assistant<|user|>\n Hello<|assistant|>\n Hi there<|user|>\n Who are you<|assistant|>\n    I am an assistant   <|user|>\n Another question<|assistant|>",
        "", "", NULL, 0, true, true,
    },
    {
        "ChatGLM4",
        "[gMASK]<sop>{% for item in messages %}{% if item['tools'] is defined %}<|system|>\n你是一个名为 ChatGLM 的人工智能助手。你是基于智谱AI训练的语言模型 GLM-4 模型开发的，你的任务是针对用户的问题和要求提供适当的答复和支持。\n\n# 可用工具{% set tools = item['tools'] %}{% for tool in tools %}{% if tool['type'] == 'function' %}\n\n## {{ tool['function']['name'] }}\n\n{{ tool['function'] | tojson(indent=4) }}\n......{% endif %}{% endfor %}{% endif %}{% if item['content'] %}<|{{ item['role'] }}|>{{ item['metadata'] }}\n{{ item['content'] }}{% endif %}{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}",
        "[gMASK]<sop><|system|>\nYou are a helpful assistant<|user|>\nHello<|assistant|>\nHi there<|user|>\nWho are you<|assistant|>\n   I am an assistant   <|user|>\nAnother question<|assistant|>\n",
        "", "", NULL, 0, true, true,
    },
    {
        "GLMEdge",
        "{% for item in messages %}{% if item['role'] == 'system' %}<|system|>\n{{ item['content'] }}{% elif item['role'] == 'user' %}<|user|>\n{{ item['content'] }}{% elif item['role'] == 'assistant' %}<|assistant|>\n{{ item['content'] }}{% endif %}{% endfor %}<|assistant|>",
        "<|system|>\nYou are a helpful assistant<|user|>\nHello<|assistant|>\nHi there<|user|>\nWho are you<|assistant|>\n   I am an assistant   <|user|>\nAnother question<|assistant|>",
        "", "", NULL, 0, true, true,
    },
    {
        "MiniCPM-3B-OpenHermes-2.5-v2-GGUF",
        "{% for message in messages %}{% if message['role'] == 'user' %}{{'<用户>' + message['content'].strip() + '<AI>'}}{% else %}{{message['content'].strip()}}{% endif %}{% endfor %}",
        "You are a helpful assistant<用户>Hello<AI>Hi there<用户>Who are you<AI>I am an assistant<用户>Another question<AI>",
        "", "", NULL, 0, true, true,
    },
    {
        "DeepSeek-V2",
        "{% if not add_generation_prompt is defined %}{% set add_generation_prompt = false %}{% endif %}{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}{{ 'User: ' + message['content'] + '\n\n' }}{% elif message['role'] == 'assistant' %}{{ 'Assistant: ' + message['content'] + eos_token }}{% elif message['role'] == 'system' %}{{ message['content'] + '\n\n' }}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}",
        "You are a helpful assistant\n\nUser: Hello\n\nAssistant: Hi there<｜end▁of▁sentence｜>User: Who are you\n\nAssistant:    I am an assistant   <｜end▁of▁sentence｜>User: Another question\n\nAssistant:",
        "", "<｜end▁of▁sentence｜>", NULL, 0, true, true,
    },
    {
        "ibm-granite/granite-3.0-8b-instruct",
        "{%- if tools %}\n    {{- '<|start_of_role|>available_tools<|end_of_role|>\n' }}\n    {%- for tool in tools %}\n    {{- tool | tojson(indent=4) }}\n    {%- if not loop.last %}\n        {{- '\n\n' }}\n    {%- endif %}\n    {%- endfor %}\n    {{- '<|end_of_text|>\n' }}\n{%- endif %}\n{%- for message in messages %}\n    {%- if message['role'] == 'system' %}\n    {{- '<|start_of_role|>system<|end_of_role|>' + message['content'] + '<|end_of_text|>\n' }}\n    {%- elif message['role'] == 'user' %}\n    {{- '<|start_of_role|>user<|end_of_role|>' + message['content'] + '<|end_of_text|>\n' }}\n    {%- elif message['role'] == 'assistant' %}\n    {{- '<|start_of_role|>assistant<|end_of_role|>'  + message['content'] + '<|end_of_text|>\n' }}\n    {%- elif message['role'] == 'assistant_tool_call' %}\n    {{- '<|start_of_role|>assistant<|end_of_role|><|tool_call|>' + message['content'] + '<|end_of_text|>\n' }}\n    {%- elif message['role'] == 'tool_response' %}\n    {{- '<|start_of_role|>tool_response<|end_of_role|>' + message['content'] + '<|end_of_text|>\n' }}\n    {%- endif %}\n    {%- if loop.last and add_generation_prompt %}\n    {{- '<|start_of_role|>assistant<|end_of_role|>' }}\n    {%- endif %}\n{%- endfor %}",
        GRANITE_BASE "<|start_of_role|>assistant<|end_of_role|>",
        "", "", NULL, 0, true, true,
    },
    {
        "mistralai/Mistral-7B-Instruct-v0.2 (mistralai 'v1' template with a system prompt)",
        "{%- if messages[0]['role'] == 'system' %}\n    {%- set system_message = messages[0]['content'] %}\n    {%- set loop_messages = messages[1:] %}\n{%- else %}\n    {%- set loop_messages = messages %}\n{%- endif %}\n\n{{- bos_token }}\n{%- for message in loop_messages %}\n    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}\n        {{- raise_exception('After the optional system message, conversation roles must alternate user/assistant/user/assistant/...') }}\n    {%- endif %}\n    {%- if message['role'] == 'user' %}\n        {%- if loop.first and system_message is defined %}\n            {{- ' [INST] ' + system_message + '\\n\\n' + message['content'] + ' [/INST]' }}\n        {%- else %}\n            {{- ' [INST] ' + message['content'] + ' [/INST]' }}\n        {%- endif %}\n    {%- elif message['role'] == 'assistant' %}\n        {{- ' ' + message['content'] + eos_token}}\n    {%- else %}\n        {{- raise_exception('Only user and assistant roles are supported, with the exception of an initial optional system message!') }}\n    {%- endif %}\n{%- endfor %}\n",
        " [INST] You are a helpful assistant\n\nHello [/INST] Hi there</s> [INST] Who are you [/INST]    I am an assistant   </s> [INST] Another question [/INST]",
        "", "</s>", NULL, 0, true, true,
    },
    {
        "Mistral-Large-Instruct-2407 (mistralai 'v3' template; modified to have system prompt at start)",
        "{%- if messages[0][\"role\"] == \"system\" %}\n    {%- set system_message = messages[0][\"content\"] %}\n    {%- set loop_messages = messages[1:] %}\n{%- else %}\n    {%- set loop_messages = messages %}\n{%- endif %}\n{%- if not tools is defined %}\n    {%- set tools = none %}\n{%- endif %}\n{%- set user_messages = loop_messages | selectattr(\"role\", \"equalto\", \"user\") | list %}\n\n{#- This block checks for alternating user/assistant messages, skipping tool calling messages #}\n{%- set ns = namespace() %}\n{%- set ns.index = 0 %}\n{%- for message in loop_messages %}\n    {%- if not (message.role == \"tool\" or message.role == \"tool_results\" or (message.tool_calls is defined and message.tool_calls is not none)) %}\n        {%- if (message[\"role\"] == \"user\") != (ns.index % 2 == 0) %}\n            {{- raise_exception(\"After the optional system message, conversation roles must alternate user/assistant/user/assistant/...\") }}\n        {%- endif %}\n        {%- set ns.index = ns.index + 1 %}\n    {%- endif %}\n{%- endfor %}\n\n{{- bos_token }}\n{%- for message in loop_messages %}\n    {%- if message[\"role\"] == \"user\" %}\n        {%- if tools is not none and (message == user_messages[-1]) %}\n            {{- \"[AVAILABLE_TOOLS] [\" }}\n            {%- for tool in tools %}\n                {%- set tool = tool.function %}\n                {{- '{\"type\": \"function\", \"function\": {' }}\n                {%- for key, val in tool.items() if key != \"return\" %}\n                    {%- if val is string %}\n                        {{- '\"' + key + '\": \"' + val + '\"' }}\n                    {%- else %}\n                        {{- '\"' + key + '\": ' + val|tojson }}\n                    {%- endif %}\n                    {%- if not loop.last %}\n                        {{- \", \" }}\n                    {%- endif %}\n                {%- endfor %}\n                {{- \"}}\" }}\n                {%- if not loop.last %}\n                    {{- \", \" }}\n                {%- else %}\n                    {{- \"]\" }}\n                {%- endif %}\n            {%- endfor %}\n            {{- \"[/AVAILABLE_TOOLS]\" }}\n            {%- endif %}\n        {%- if loop.last and system_message is defined %}\n            {{- \"[INST] \" + system_message + \"\\n\\n\" + message[\"content\"] + \"[/INST]\" }}\n        {%- else %}\n            {{- \"[INST] \" + message[\"content\"] + \"[/INST]\" }}\n        {%- endif %}\n    {%- elif message.tool_calls is defined and message.tool_calls is not none %}\n        {{- \"[TOOL_CALLS] [\" }}\n        {%- for tool_call in message.tool_calls %}\n            {%- set out = tool_call.function|tojson %}\n            {{- out[:-1] }}\n            {%- if not tool_call.id is defined or tool_call.id|length != 9 %}\n                {{- raise_exception(\"Tool call IDs should be alphanumeric strings with length 9!\") }}\n            {%- endif %}\n            {{- ', \"id\": \"' + tool_call.id + '\"}' }}\n            {%- if not loop.last %}\n                {{- \", \" }}\n            {%- else %}\n                {{- \"]\" + eos_token }}\n            {%- endif %}\n        {%- endfor %}\n    {%- elif message[\"role\"] == \"assistant\" %}\n        {{- \" \" + message[\"content\"]|trim + eos_token}}\n    {%- elif message[\"role\"] == \"tool_results\" or message[\"role\"] == \"tool\" %}\n        {%- if message.content is defined and message.content.content is defined %}\n            {%- set content = message.content.content %}\n        {%- else %}\n            {%- set content = message.content %}\n        {%- endif %}\n        {{- '[TOOL_RESULTS] {\"content\": ' + content|string + \", \" }}\n        {%- if not message.tool_call_id is defined or message.tool_call_id|length != 9 %}\n            {{- raise_exception(\"Tool call IDs should be alphanumeric strings with length 9!\") }}\n        {%- endif %}\n        {{- '\"call_id\": \"' + message.tool_call_id + '\"}[/TOOL_RESULTS]' }}\n    {%- else %}\n        {{- raise_exception(\"Only user and assistant roles are supported, with the exception of an initial optional system message!\") }}\n    {%- endif %}\n{%- endfor %}\n",
        "[INST] Hello[/INST] Hi there</s>[INST] Who are you[/INST] I am an assistant</s>[INST] You are a helpful assistant\n\nAnother question[/INST]",
        "", "</s>", NULL, 0, false, true,
    },
    {
        "Mistral-Nemo-Instruct-2407 (mistralai 'v3-tekken' template; modified to have system prompt at start)",
        "{%- if messages[0][\"role\"] == \"system\" %}\n    {%- set system_message = messages[0][\"content\"] %}\n    {%- set loop_messages = messages[1:] %}\n{%- else %}\n    {%- set loop_messages = messages %}\n{%- endif %}\n{%- if not tools is defined %}\n    {%- set tools = none %}\n{%- endif %}\n{%- set user_messages = loop_messages | selectattr(\"role\", \"equalto\", \"user\") | list %}\n\n{#- This block checks for alternating user/assistant messages, skipping tool calling messages #}\n{%- set ns = namespace() %}\n{%- set ns.index = 0 %}\n{%- for message in loop_messages %}\n    {%- if not (message.role == \"tool\" or message.role == \"tool_results\" or (message.tool_calls is defined and message.tool_calls is not none)) %}\n        {%- if (message[\"role\"] == \"user\") != (ns.index % 2 == 0) %}\n            {{- raise_exception(\"After the optional system message, conversation roles must alternate user/assistant/user/assistant/...\") }}\n        {%- endif %}\n        {%- set ns.index = ns.index + 1 %}\n    {%- endif %}\n{%- endfor %}\n\n{{- bos_token }}\n{%- for message in loop_messages %}\n    {%- if message[\"role\"] == \"user\" %}\n        {%- if tools is not none and (message == user_messages[-1]) %}\n            {{- \"[AVAILABLE_TOOLS][\" }}\n            {%- for tool in tools %}\n                {%- set tool = tool.function %}\n                {{- '{\"type\": \"function\", \"function\": {' }}\n                {%- for key, val in tool.items() if key != \"return\" %}\n                    {%- if val is string %}\n                        {{- '\"' + key + '\": \"' + val + '\"' }}\n                    {%- else %}\n                        {{- '\"' + key + '\": ' + val|tojson }}\n                    {%- endif %}\n                    {%- if not loop.last %}\n                        {{- \", \" }}\n                    {%- endif %}\n                {%- endfor %}\n                {{- \"}}\" }}\n                {%- if not loop.last %}\n                    {{- \", \" }}\n                {%- else %}\n                    {{- \"]\" }}\n                {%- endif %}\n            {%- endfor %}\n            {{- \"[/AVAILABLE_TOOLS]\" }}\n            {%- endif %}\n        {%- if loop.last and system_message is defined %}\n            {{- \"[INST]\" + system_message + \"\\n\\n\" + message[\"content\"] + \"[/INST]\" }}\n        {%- else %}\n            {{- \"[INST]\" + message[\"content\"] + \"[/INST]\" }}\n        {%- endif %}\n    {%- elif (message.tool_calls is defined and message.tool_calls is not none) %}\n        {{- \"[TOOL_CALLS][\" }}\n        {%- for tool_call in message.tool_calls %}\n            {%- set out = tool_call.function|tojson %}\n            {{- out[:-1] }}\n            {%- if not tool_call.id is defined or tool_call.id|length != 9 %}\n                {{- raise_exception(\"Tool call IDs should be alphanumeric strings with length 9!\") }}\n            {%- endif %}\n            {{- ', \"id\": \"' + tool_call.id + '\"}' }}\n            {%- if not loop.last %}\n                {{- \", \" }}\n            {%- else %}\n                {{- \"]\" + eos_token }}\n            {%- endif %}\n        {%- endfor %}\n    {%- elif message[\"role\"] == \"assistant\" %}\n        {{- message[\"content\"] + eos_token}}\n    {%- elif message[\"role\"] == \"tool_results\" or message[\"role\"] == \"tool\" %}\n        {%- if message.content is defined and message.content.content is defined %}\n            {%- set content = message.content.content %}\n        {%- else %}\n            {%- set content = message.content %}\n        {%- endif %}\n        {{- '[TOOL_RESULTS]{\"content\": ' + content|string + \", \" }}\n        {%- if not message.tool_call_id is defined or message.tool_call_id|length != 9 %}\n            {{- raise_exception(\"Tool call IDs should be alphanumeric strings with length 9!\") }}\n        {%- endif %}\n        {{- '\"call_id\": \"' + message.tool_call_id + '\"}[/TOOL_RESULTS]' }}\n    {%- else %}\n        {{- raise_exception(\"Only user and assistant roles are supported, with the exception of an initial optional system message!\") }}\n    {%- endif %}\n{%- endfor %}\n",
        "[INST]Hello[/INST]Hi there</s>[INST]Who are you[/INST]   I am an assistant   </s>[INST]You are a helpful assistant\n\nAnother question[/INST]",
        "", "</s>", NULL, 0, false, true,
    },
    {
        "mistralai/Mistral-Large-Instruct-2411 (mistralai 'v7' template)",
        "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + '[/INST]' }}{% elif message['role'] == 'system' %}{{ '[SYSTEM_PROMPT] ' + message['content'] + '[/SYSTEM_PROMPT]' }}{% elif message['role'] == 'assistant' %}{{ ' ' + message['content'] + eos_token }}{% else %}{{ raise_exception('Only user, system and assistant roles are supported!') }}{% endif %}{% endfor %}",
        "[SYSTEM_PROMPT] You are a helpful assistant[/SYSTEM_PROMPT][INST] Hello[/INST] Hi there</s>[INST] Who are you[/INST]    I am an assistant   </s>[INST] Another question[/INST]",
        "", "</s>", NULL, 0, true, true,
    },
    {
        "ai-sage/GigaChat-20B-A3B-instruct",
        "{% if messages[0]['role'] == 'system' -%}\n    {%- set loop_messages = messages[1:] -%}\n    {%- set system_message = bos_token + messages[0]['content'] + additional_special_tokens[1] -%}\n{%- else -%}\n    {%- set loop_messages = messages -%}\n    {%- set system_message = bos_token + '' -%}\n{%- endif -%}\n{%- for message in loop_messages %}\n    {% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}\n        {{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}\n    {% endif %}\n    \n    {%- if loop.index0 == 0 -%}\n        {{ system_message -}}\n    {%- endif -%}\n    {%- if message['role'] == 'user' -%}\n        {{ message['role'] + additional_special_tokens[0] + message['content'] + additional_special_tokens[1] -}}\n        {{ 'available functions' + additional_special_tokens[0] + additional_special_tokens[2] + additional_special_tokens[3]  + additional_special_tokens[1] -}}\n    {%- endif -%}\n    {%- if message['role'] == 'assistant' -%}\n        {{ message['role'] + additional_special_tokens[0] + message['content'] + additional_special_tokens[1] -}}\n    {%- endif -%}\n    {%- if loop.last and add_generation_prompt -%}\n        {{ 'assistant' + additional_special_tokens[0] -}}\n    {%- endif -%}\n{%- endfor %}",
        "<s>You are a helpful assistant<|message_sep|>user<|role_sep|>Hello<|message_sep|>available functions<|role_sep|>[]<|message_sep|>assistant<|role_sep|>Hi there<|message_sep|>user<|role_sep|>Who are you<|message_sep|>available functions<|role_sep|>[]<|message_sep|>assistant<|role_sep|>   I am an assistant   <|message_sep|>user<|role_sep|>Another question<|message_sep|>available functions<|role_sep|>[]<|message_sep|>assistant<|role_sep|>",
        "", "", NULL, 0, true, false,
    },
    {
        "Infinigence/Megrez-3B-Instruct",
        "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|role_start|>system<|role_end|>你是Megrez-3B-Instruct，将针对用户的问题给出详细的、积极的回答。<|turn_end|>' }}{% endif %}{{ '<|role_start|>' + message['role'] + '<|role_end|>' + message['content'] + '<|turn_end|>' }}{% endfor %}{% if add_generation_prompt %}{{ '<|role_start|>assistant<|role_end|>' }}{% endif %}",
        "<|role_start|>system<|role_end|>You are a helpful assistant<|turn_end|><|role_start|>user<|role_end|>Hello<|turn_end|><|role_start|>assistant<|role_end|>Hi there<|turn_end|><|role_start|>user<|role_end|>Who are you<|turn_end|><|role_start|>assistant<|role_end|>   I am an assistant   <|turn_end|><|role_start|>user<|role_end|>Another question<|turn_end|><|role_start|>assistant<|role_end|>",
        "", "", NULL, 0, true, true,
    },
    {
        "phi-4",
        "{% for message in messages %}{% if (message['role'] == 'system') %}{{'<|im_start|>system<|im_sep|>' + message['content'] + '<|im_end|>'}}{% elif (message['role'] == 'user') %}{{'<|im_start|>user<|im_sep|>' + message['content'] + '<|im_end|><|im_start|>assistant<|im_sep|>'}}{% elif (message['role'] == 'assistant') %}{{message['content'] + '<|im_end|>'}}{% endif %}{% endfor %}",
        "<|im_start|>system<|im_sep|>You are a helpful assistant<|im_end|><|im_start|>user<|im_sep|>Hello<|im_end|><|im_start|>assistant<|im_sep|>Hi there<|im_end|><|im_start|>user<|im_sep|>Who are you<|im_end|><|im_start|>assistant<|im_sep|>   I am an assistant   <|im_end|><|im_start|>user<|im_sep|>Another question<|im_end|><|im_start|>assistant<|im_sep|>",
        "", "", NULL, 0, true, true,
    },
    {
        "yandex/YandexGPT-5-Lite-8B-instruct",
        "<s>{%- set names = {'assistant': ' Ассистент:', 'user': ' Пользователь:'} %}\n{%- set tools_prefix = 'Тебе доступны следующие функции:' %}\n{%- macro __render_tool(tool) %}\n    {%- set name = tool.function.name %}\n    {%- set description = tool.function.description|default('') %}\n    {%- set parameters = tool.function.parameters|tojson %}\n    {{- '\\n' }}function {{ '{' }}'name':'{{ name }}',\n    {%- if tool.function.description %}'description':'{{ description }}',{% endif %}\n'parameters':{{ parameters }}\n    {{- '}' }}\n{%- endmacro %}\n{%- macro __render_tools(tools) %}\n    {{- tools_prefix }}\n    {%- for tool in tools %}\n        {{- __render_tool(tool) }}\n    {%- endfor %}\n    {{- '\\n\\n' }}\n{%- endmacro %}\n{%- macro __render_tool_message(message) %}\n    {{- '\\n\\nРезультат вызова' }} {{ message.name }}: {{ message.content }} {{ '\\n\\n' }}\n{%- endmacro %}\n{%- if tools -%}\n    {{- __render_tools(tools) }}\n{%- endif -%}\n{%- macro __render_user_message(message) %}\n{{ names.user }} {{ message.content + '\\n\\n' }}\n{%- endmacro %}\n{%- macro __render_assistant_message(message) %}\n    {{- names.assistant }}\n    {%- set call = message['function_call'] %}\n    {%- if call %}\n        {{- '\\n[TOOL_CALL_START]' }}{{ call.name }}{{ '\\n' }}{{ call.arguments|tojson }}\n    {%- else %}\n        {{- ' ' + message.content + '\\n\\n' }}\n    {%- endif %}\n{%- endmacro %}\n{%- if not add_generation_prompt is defined %}\n{%- set add_generation_prompt = false %}\n{%- endif %}\n{%- for message in messages %}\n    {%- if message['role'] == 'user' %}\n        {{- __render_user_message(message) }}\n    {%- endif %}\n    {%- if message.role == 'assistant' and not loop.last %}\n        {{- __render_assistant_message(message) }}\n    {%- endif %}\n    {%- if message.role == 'tool' %}\n        {{- __render_tool_message(message) }}\n    {%- endif %}\n    {%- if loop.last %}\n        {{- ' Ассистент:[SEP]' }}\n    {%- endif %}\n{%- endfor %}\n",
        "<s> Пользователь: You are a helpful assistant\nHello\n\n Ассистент: Hi there\n\n Пользователь: Who are you\n\n Ассистент:    I am an assistant   \n\n Пользователь: Another question\n\n Ассистент:[SEP]",
        "<s>", "", NULL, 0, false, true,
    },
    {
        "inclusionAI/Ling-lite",
        "{% for message in messages %}{% set role = message['role'] | lower %}{% if role == 'user' %}{% set role = 'HUMAN' %}{% endif %}{% set role = role | upper %}{{ '<role>' + role + '</role>' + message['content'] }}{% endfor %}{% if add_generation_prompt %}{{ '<role>ASSISTANT</role>' }}{% endif %}",
        "<role>SYSTEM</role>You are a helpful assistant<role>HUMAN</role>Hello<role>ASSISTANT</role>Hi there<role>HUMAN</role>Who are you<role>ASSISTANT</role>   I am an assistant   <role>HUMAN</role>Another question<role>ASSISTANT</role>",
        "", "", NULL, 0, true, true,
    },
    {
        "ByteDance-Seed/Seed-OSS-36B-Instruct",
        "{# <seed:bos> #}{%- for message in messages %}{%- if message.role in [\"user\", \"system\"] %}{{ bos_token + message.role + \"\\n\" + message.content + eos_token }}{%- elif message.role == \"assistant\" %}{{ bos_token + message.role }}{%- if message.content is defined and message.content is string and message.content|trim|length > 0 %}{{ \"\\n\" + message.content|trim + eos_token }}{%- endif %}{%- else %}{{ bos_token + message.role + \"\\n\" + message.content + eos_token }}{%- endif %}{%- endfor %}{%- if add_generation_prompt %}{{ bos_token + \"assistant\\n\" }}{%- endif %}",
        "<seed:bos>system\nYou are a helpful assistant<seed:eos><seed:bos>user\nHello<seed:eos><seed:bos>assistant\nHi there<seed:eos><seed:bos>user\nWho are you<seed:eos><seed:bos>assistant\nI am an assistant<seed:eos><seed:bos>user\nAnother question<seed:eos><seed:bos>assistant\n",
        "<seed:bos>", "<seed:eos>", NULL, 0, true, true,
    },
    {
        "ibm-granite/granite-3.x (tool call)",
        GRANITE_TOOL_TMPL,
        GRANITE_BASE "<|start_of_role|>user<|end_of_role|>What is the weather?<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|><|tool_call|>[{\"name\": \"get_weather\", \"arguments\": {\"location\": \"NYC\"}}]<|end_of_text|>\n<|start_of_role|>tool_response<|end_of_role|>{\"temperature\": 72}<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>",
        "", "", EXTRA_GRANITE_3, 3, false, true,
    },
    {
        "ibm-granite/granite-4.0 (tool call)",
        GRANITE_TOOL_TMPL "\n{# <tool_call> <tools> g4_default_system_message #}",
        GRANITE_BASE "<|start_of_role|>user<|end_of_role|>What is the weather?<|end_of_text|>\n" "<|start_of_role|>assistant<|end_of_role|><|tool_call|><tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"NYC\"}}\n</tool_call><|end_of_text|>\n" "<|start_of_role|>tool_response<|end_of_role|>{\"temperature\": 72}<|end_of_text|>\n" "<|start_of_role|>assistant<|end_of_role|>",
        "", "", EXTRA_GRANITE_4, 3, true, true,
    },
    {
        "ibm-granite/granite-4.1 (tool call)",
        GRANITE_TOOL_TMPL "\n{# <tool_call> <tools> #}",
        GRANITE_BASE "<|start_of_role|>user<|end_of_role|>What is the weather?<|end_of_text|>\n" "<|start_of_role|>assistant<|end_of_role|><|tool_call|><tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"NYC\"}}\n</tool_call><|end_of_text|>\n" "<|start_of_role|>tool_response<|end_of_role|>{\"temperature\": 72}<|end_of_text|>\n" "<|start_of_role|>assistant<|end_of_role|>",
        "", "", EXTRA_GRANITE_4, 3, true, true,
    },
};

static json_t * messages_json(const struct jinja_case * tc) {
    json_t * arr = json_array();
    for (size_t i = 0; i < sizeof(CONV) / sizeof(CONV[0]); i++) {
        json_array_append_new(arr, json_pack("{s:s, s:s}", "role", CONV[i].role, "content", CONV[i].content));
    }
    for (size_t i = 0; i < tc->n_extra; i++) {
        json_array_append_new(arr, json_pack("{s:s, s:s}", "role", tc->extra[i].role, "content", tc->extra[i].content));
    }
    return arr;
}

static char * builtin_render(const struct jinja_case * tc) {
    struct llama_chat_message msgs[16];
    size_t n = 0;
    for (size_t i = 0; i < sizeof(CONV) / sizeof(CONV[0]); i++) {
        msgs[n++] = CONV[i];
    }
    for (size_t i = 0; i < tc->n_extra; i++) {
        msgs[n++] = tc->extra[i];
    }
    char * buf = malloc(8192);
    int32_t r = llama_chat_apply_template(tc->tmpl, msgs, n, true, buf, 8192);
    if (r < 0 || r >= 8192) {
        free(buf);
        return NULL;
    }
    buf[r] = '\0';
    return buf;
}

// Qwen3 with tools, a tool call, a tool response and thinking: llama.cpp's models/templates/Qwen-Qwen3-0.6B.jinja
// (the template text); the expected prompts are derived by hand from it.
// (in two parts: one string literal may hold only 4095 characters in ISO C)
static const char * QWEN3_PARTS[2] = {
    "{%- if tools %}\n"
    "    {{- '<|im_start|>system\\n' }}\n"
    "    {%- if messages[0].role == 'system' %}\n"
    "        {{- messages[0].content + '\\n\\n' }}\n"
    "    {%- endif %}\n"
    "    {{- \"# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\nYou are provided with function signatures within <tools></tools> XML tags:\\n<tools>\" }}\n"
    "    {%- for tool in tools %}\n"
    "        {{- \"\\n\" }}\n"
    "        {{- tool | tojson }}\n"
    "    {%- endfor %}\n"
    "    {{- \"\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{\\\"name\\\": <function-name>, \\\"arguments\\\": <args-json-object>}\\n</tool_call><|im_end|>\\n\" }}\n"
    "{%- else %}\n"
    "    {%- if messages[0].role == 'system' %}\n"
    "        {{- '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' }}\n"
    "    {%- endif %}\n"
    "{%- endif %}\n"
    "{%- set ns = namespace(multi_step_tool=true, last_query_index=messages|length - 1) %}\n"
    "{%- for message in messages[::-1] %}\n"
    "    {%- set index = (messages|length - 1) - loop.index0 %}\n"
    "    {%- if ns.multi_step_tool and message.role == \"user\" and not(message.content.startswith('<tool_response>') and message.content.endswith('</tool_response>')) %}\n"
    "        {%- set ns.multi_step_tool = false %}\n"
    "        {%- set ns.last_query_index = index %}\n"
    "    {%- endif %}\n"
    "{%- endfor %}\n",
    "{%- for message in messages %}\n"
    "    {%- if (message.role == \"user\") or (message.role == \"system\" and not loop.first) %}\n"
    "        {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}\n"
    "    {%- elif message.role == \"assistant\" %}\n"
    "        {%- set content = message.content %}\n"
    "        {%- set reasoning_content = '' %}\n"
    "        {%- if message.reasoning_content is defined and message.reasoning_content is not none %}\n"
    "            {%- set reasoning_content = message.reasoning_content %}\n"
    "        {%- else %}\n"
    "            {%- if '</think>' in message.content %}\n"
    "                {%- set content = message.content.split('</think>')[-1].lstrip('\\n') %}\n"
    "                {%- set reasoning_content = message.content.split('</think>')[0].rstrip('\\n').split('<think>')[-1].lstrip('\\n') %}\n"
    "            {%- endif %}\n"
    "        {%- endif %}\n"
    "        {%- if loop.index0 > ns.last_query_index %}\n"
    "            {%- if loop.last or (not loop.last and reasoning_content) %}\n"
    "                {{- '<|im_start|>' + message.role + '\\n<think>\\n' + reasoning_content.strip('\\n') + '\\n</think>\\n\\n' + content.lstrip('\\n') }}\n"
    "            {%- else %}\n"
    "                {{- '<|im_start|>' + message.role + '\\n' + content }}\n"
    "            {%- endif %}\n"
    "        {%- else %}\n"
    "            {{- '<|im_start|>' + message.role + '\\n' + content }}\n"
    "        {%- endif %}\n"
    "        {%- if message.tool_calls %}\n"
    "            {%- for tool_call in message.tool_calls %}\n"
    "                {%- if (loop.first and content) or (not loop.first) %}\n"
    "                    {{- '\\n' }}\n"
    "                {%- endif %}\n"
    "                {%- if tool_call.function %}\n"
    "                    {%- set tool_call = tool_call.function %}\n"
    "                {%- endif %}\n"
    "                {{- '<tool_call>\\n{\"name\": \"' }}\n"
    "                {{- tool_call.name }}\n"
    "                {{- '\", \"arguments\": ' }}\n"
    "                {%- if tool_call.arguments is string %}\n"
    "                    {{- tool_call.arguments }}\n"
    "                {%- else %}\n"
    "                    {{- tool_call.arguments | tojson }}\n"
    "                {%- endif %}\n"
    "                {{- '}\\n</tool_call>' }}\n"
    "            {%- endfor %}\n"
    "        {%- endif %}\n"
    "        {{- '<|im_end|>\\n' }}\n"
    "    {%- elif message.role == \"tool\" %}\n"
    "        {%- if loop.first or (messages[loop.index0 - 1].role != \"tool\") %}\n"
    "            {{- '<|im_start|>user' }}\n"
    "        {%- endif %}\n"
    "        {{- '\\n<tool_response>\\n' }}\n"
    "        {{- message.content }}\n"
    "        {{- '\\n</tool_response>' }}\n"
    "        {%- if loop.last or (messages[loop.index0 + 1].role != \"tool\") %}\n"
    "            {{- '<|im_end|>\\n' }}\n"
    "        {%- endif %}\n"
    "    {%- endif %}\n"
    "{%- endfor %}\n"
    "{%- if add_generation_prompt %}\n"
    "    {{- '<|im_start|>assistant\\n' }}\n"
    "    {%- if enable_thinking is defined and enable_thinking is false %}\n"
    "        {{- '<think>\\n\\n</think>\\n\\n' }}\n"
    "    {%- endif %}\n"
    "{%- endif %}",
};
static char QWEN3[8192];

static void expect_apply(const char * tmpl, const char * msgs_json, const char * tools_json, bool add_gen,
                         const char * kwargs_json, const char * expected, const char * what) {
    char err[512] = "";
    struct common_chat_jinja * cj = common_chat_jinja_init(tmpl, "", "<|im_end|>", err, sizeof(err));
    TH_CHECK(cj != NULL, "%s: parse: %s", what, err);
    if (!cj) {
        return;
    }
    json_t * msgs = json_loads(msgs_json, 0, NULL);
    json_t * tools = tools_json ? json_loads(tools_json, 0, NULL) : NULL;
    json_t * kwargs = kwargs_json ? json_loads(kwargs_json, 0, NULL) : NULL;
    char * out = common_chat_jinja_apply(cj, msgs, tools, add_gen, kwargs, err, sizeof(err));
    TH_CHECK(out && strcmp(out, expected) == 0, "%s:\n--- expected ---\n%s\n--- got ---\n%s %s", what, expected,
             out ? out : "(null)", out ? "" : err);
    free(out);
    json_decref(msgs);
    json_decref(tools);
    json_decref(kwargs);
    common_chat_jinja_free(cj);
}

static void test_qwen3(void) {
    expect_apply(QWEN3,
                 "[{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"Weather?\"},"
                 " {\"role\": \"assistant\", \"content\": \"\", \"tool_calls\": [{\"type\": \"function\", \"function\":"
                 " {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}}]},"
                 " {\"role\": \"tool\", \"content\": \"{\\\"t\\\": 20}\"}, {\"role\": \"assistant\", \"content\": \"It is 20.\"},"
                 " {\"role\": \"user\", \"content\": \"Thanks\"}]",
                 "[{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": {\"type\": \"object\"}}}]",
                 true, "{\"enable_thinking\": false}",
                 "<|im_start|>system\nS\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
                 "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
                 "{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": {\"type\": \"object\"}}}\n"
                 "</tools>\n\nFor each function call, return a json object with function name and arguments within "
                 "<tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": "
                 "<args-json-object>}\n</tool_call><|im_end|>\n"
                 "<|im_start|>user\nWeather?<|im_end|>\n"
                 "<|im_start|>assistant\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n"
                 "</tool_call><|im_end|>\n"
                 "<|im_start|>user\n<tool_response>\n{\"t\": 20}\n</tool_response><|im_end|>\n"
                 "<|im_start|>assistant\nIt is 20.<|im_end|>\n"
                 "<|im_start|>user\nThanks<|im_end|>\n"
                 "<|im_start|>assistant\n<think>\n\n</think>\n\n",
                 "qwen3 tools + enable_thinking=false");
    // reasoning after the last user turn is kept and re-wrapped; thinking on by default adds nothing
    expect_apply(QWEN3,
                 "[{\"role\": \"user\", \"content\": \"Q\"}, {\"role\": \"assistant\", \"content\": "
                 "\"<think>\\nR\\n</think>\\n\\nA\"}]",
                 NULL, false, NULL,
                 "<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n<think>\nR\n</think>\n\nA<|im_end|>\n",
                 "qwen3 reasoning in history");
    expect_apply(QWEN3, "[{\"role\": \"user\", \"content\": \"Q\"}]", NULL, true, NULL,
                 "<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n", "qwen3 thinking by default");
}

// Mistral Small 3.1 with tools, a tool call and its result: llama.cpp's
// models/templates/mistralai-Mistral-Small-3.1-24B-Instruct-2503.jinja (in three parts, as above). It uses
// strftime_now, backslash-newline continuations in strings, selectattr, dict.get, `for k, v in d.items() if ...`,
// slices of strings and dict equality. The expected prompt is derived by hand (a system message is given, so the
// dated default one is not used; the continuations join lines, as Python's string escapes do).
static const char * MISTRAL_SMALL_PARTS[3] = {
    "{%- set today = strftime_now(\"%Y-%m-%d\") %}\n"
    "{%- set default_system_message = \"You are Mistral Small 3, a Large Language Model (LLM) created by Mistral AI, a French startup headquartered in Paris.\\\n"
    "Your knowledge base was last updated on 2023-10-01. The current date is \" + today + \".\\\n"
    "\\\n"
    "When you're not sure about some information, you say that you don't have the information and don't make up anything.\\\n"
    "If the user's question is not clear, ambiguous, or does not provide enough context for you to accurately answer the question, you do not try to answer it right away and you rather ask the user to clarify their request (e.g. \\\"What are some good restaurants around me?\\\" => \\\"Where are you?\\\" or \\\"When is the next flight to Tokyo\\\" => \\\"Where do you travel from?\\\")\" %}\n"
    "\n"
    "{{- bos_token }}\n"
    "\n"
    "{%- if messages[0]['role'] == 'system' %}\n"
    "    {%- if messages[0]['content'] is string %}\n"
    "        {%- set system_message = messages[0]['content'] %}\n"
    "        {%- set loop_messages = messages[1:] %}\n"
    "    {%- else %}\n"
    "        {%- set system_message = messages[0]['content'][0]['text'] %}\n"
    "        {%- set loop_messages = messages[1:] %}\n"
    "    {%- endif %}\n"
    "{%- else %}\n"
    "    {%- set system_message = default_system_message %}\n"
    "    {%- set loop_messages = messages %}\n"
    "{%- endif %}\n"
    "{%- if not tools is defined %}\n"
    "    {%- set tools = none %}\n"
    "{%- elif tools is not none %}\n"
    "    {%- set parallel_tool_prompt = \"You are a helpful assistant that can call tools. If you call one or more tools, format them in a single JSON array or objects, where each object is a tool call, not as separate objects outside of an array or multiple arrays. Use the format [{\\\"name\\\": tool call name, \\\"arguments\\\": tool call arguments}, additional tool calls] if you call more than one tool. If you call tools, do not attempt to interpret them or otherwise provide a response until you receive a tool call result that you can interpret for the user.\" %}\n"
    "    {%- if system_message is defined %}\n"
    "        {%- set system_message = parallel_tool_prompt + \"\\\n"
    "\\\n"
    "\" + system_message %}\n"
    "    {%- else %}\n"
    "        {%- set system_message = parallel_tool_prompt %}\n"
    "    {%- endif %}\n"
    "{%- endif %}\n"
    "{{- '[SYSTEM_PROMPT]' + system_message + '[/SYSTEM_PROMPT]' }}\n"
    "\n",
    "{%- set user_messages = loop_messages | selectattr(\"role\", \"equalto\", \"user\") | list %}\n"
    "\n"
    "{%- set filtered_messages = [] %}\n"
    "{%- for message in loop_messages %}\n"
    "    {%- if message[\"role\"] not in [\"tool\", \"tool_results\"] and not message.get(\"tool_calls\") %}\n"
    "        {%- set filtered_messages = filtered_messages + [message] %}\n"
    "    {%- endif %}\n"
    "{%- endfor %}\n"
    "\n"
    "{%- for message in filtered_messages %}\n"
    "    {%- if (message[\"role\"] == \"user\") != (loop.index0 % 2 == 0) %}\n"
    "        {{- raise_exception(\"After the optional system message, conversation roles must alternate user/assistant/user/assistant/...\") }}\n"
    "    {%- endif %}\n"
    "{%- endfor %}\n"
    "\n",
    "{%- for message in loop_messages %}\n"
    "    {%- if message[\"role\"] == \"user\" %}\n"
    "        {%- if tools is not none and (message == user_messages[-1]) %}\n"
    "            {{- \"[AVAILABLE_TOOLS] [\" }}\n"
    "            {%- for tool in tools %}\n"
    "                {%- set tool = tool.function %}\n"
    "                {{- '{\"type\": \"function\", \"function\": {' }}\n"
    "                {%- for key, val in tool.items() if key != \"return\" %}\n"
    "                    {%- if val is string %}\n"
    "                        {{- '\"' + key + '\": \"' + val + '\"' }}\n"
    "                    {%- else %}\n"
    "                        {{- '\"' + key + '\": ' + val|tojson }}\n"
    "                    {%- endif %}\n"
    "                    {%- if not loop.last %}\n"
    "                        {{- \", \" }}\n"
    "                    {%- endif %}\n"
    "                {%- endfor %}\n"
    "                {{- \"}}\" }}\n"
    "                {%- if not loop.last %}\n"
    "                    {{- \", \" }}\n"
    "                {%- else %}\n"
    "                    {{- \"]\" }}\n"
    "                {%- endif %}\n"
    "            {%- endfor %}\n"
    "            {{- \"[/AVAILABLE_TOOLS]\" }}\n"
    "        {%- endif %}\n"
    "        {%- if message['content'] is string %}\n"
    "        {{- '[INST]' + message['content'] + '[/INST]' }}\n"
    "        {%- else %}\n"
    "                {{- '[INST]' }}\n"
    "                {%- for block in message['content'] %}\n"
    "                        {%- if block['type'] == 'text' %}\n"
    "                                {{- block['text'] }}\n"
    "                        {%- elif block['type'] == 'image' or block['type'] == 'image_url' %}\n"
    "                                {{- '[IMG]' }}\n"
    "                            {%- else %}\n"
    "                                {{- raise_exception('Only text and image blocks are supported in message content!') }}\n"
    "                            {%- endif %}\n"
    "                    {%- endfor %}\n"
    "                {{- '[/INST]' }}\n"
    "            {%- endif %}\n"
    "    {%- elif message[\"role\"] == \"tool_calls\" or message.tool_calls is defined %}\n"
    "        {%- if message.tool_calls is defined %}\n"
    "            {%- set tool_calls = message.tool_calls %}\n"
    "        {%- else %}\n"
    "            {%- set tool_calls = message.content %}\n"
    "        {%- endif %}\n"
    "        {{- \"[TOOL_CALLS] [\" }}\n"
    "        {%- for tool_call in tool_calls %}\n"
    "            {%- set out = tool_call.function|tojson %}\n"
    "            {{- out[:-1] }}\n"
    "            {%- if not tool_call.id is defined or tool_call.id|length < 9 %}\n"
    "                {{- raise_exception(\"Tool call IDs should be alphanumeric strings with length >= 9! (1)\" + tool_call.id) }}\n"
    "            {%- endif %}\n"
    "            {{- ', \"id\": \"' + tool_call.id[-9:] + '\"}' }}\n"
    "            {%- if not loop.last %}\n"
    "                {{- \", \" }}\n"
    "            {%- else %}\n"
    "                {{- \"]\" + eos_token }}\n"
    "            {%- endif %}\n"
    "        {%- endfor %}\n"
    "    {%- elif message['role'] == 'assistant' %}\n"
    "        {%- if message['content'] is string %}\n"
    "            {{- message['content'] + eos_token }}\n"
    "        {%- else %}\n"
    "            {{- message['content'][0]['text'] + eos_token }}\n"
    "        {%- endif %}\n"
    "    {%- elif message[\"role\"] == \"tool_results\" or message[\"role\"] == \"tool\" %}\n"
    "        {%- if message.content is defined and message.content.content is defined %}\n"
    "            {%- set content = message.content.content %}\n"
    "        {%- else %}\n"
    "            {%- set content = message.content %}\n"
    "        {%- endif %}\n"
    "        {{- '[TOOL_RESULTS] {\"content\": ' + content|string + \", \" }}\n"
    "        {%- if not message.tool_call_id is defined or message.tool_call_id|length < 9 %}\n"
    "            {{- raise_exception(\"Tool call IDs should be alphanumeric strings with length >= 9! (2)\" + message.tool_call_id) }}\n"
    "        {%- endif %}\n"
    "        {{- '\"call_id\": \"' + message.tool_call_id[-9:] + '\"}[/TOOL_RESULTS]' }}\n"
    "    {%- else %}\n"
    "        {{- raise_exception(\"Only user and assistant roles are supported, with the exception of an initial optional system message!\") }}\n"
    "    {%- endif %}\n"
    "{%- endfor %}\n",
};
static char MISTRAL_SMALL[8192];

static void test_mistral_small(void) {
    expect_apply(MISTRAL_SMALL,
                 "[{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"Weather?\"},"
                 " {\"role\": \"assistant\", \"content\": \"\", \"tool_calls\": [{\"id\": \"call123456789\", \"type\":"
                 " \"function\", \"function\": {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}}]},"
                 " {\"role\": \"tool\", \"content\": \"20\", \"tool_call_id\": \"call123456789\"},"
                 " {\"role\": \"assistant\", \"content\": \"It is 20.\"}, {\"role\": \"user\", \"content\": \"Thanks\"}]",
                 "[{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"description\": \"Get weather\","
                 " \"parameters\": {\"type\": \"object\"}}}]",
                 true, NULL,
                 "[SYSTEM_PROMPT]You are a helpful assistant that can call tools. If you call one or more tools, format them "
                 "in a single JSON array or objects, where each object is a tool call, not as separate objects outside of an "
                 "array or multiple arrays. Use the format [{\"name\": tool call name, \"arguments\": tool call arguments}, "
                 "additional tool calls] if you call more than one tool. If you call tools, do not attempt to interpret them "
                 "or otherwise provide a response until you receive a tool call result that you can interpret for the user."
                 "S[/SYSTEM_PROMPT][INST]Weather?[/INST]"
                 "[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}, \"id\": \"123456789\"}]"
                 "<|im_end|>"
                 "[TOOL_RESULTS] {\"content\": 20, \"call_id\": \"123456789\"}[/TOOL_RESULTS]"
                 "It is 20.<|im_end|>"
                 "[AVAILABLE_TOOLS] [{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"description\":"
                 " \"Get weather\", \"parameters\": {\"type\": \"object\"}}}][/AVAILABLE_TOOLS][INST]Thanks[/INST]",
                 "mistral small 3.1 tools");
    // without a system message the dated default one is used. The template's role-alternation check builds its
    // list with `set` inside a for loop, which (Jinja scoping) never reaches the outer variable: the check sees no
    // messages and two user turns render, as they do in Jinja2.
    char err[512] = "";
    struct common_chat_jinja * cj = common_chat_jinja_init(MISTRAL_SMALL, "", "", err, sizeof(err));
    json_t * msgs = json_loads("[{\"role\": \"user\", \"content\": \"a\"}, {\"role\": \"user\", \"content\": \"b\"}]",
                               0, NULL);
    char * out = cj ? common_chat_jinja_apply(cj, msgs, NULL, true, NULL, err, sizeof(err)) : NULL;
    char today[64];
    time_t now = time(NULL);
    strftime(today, sizeof(today), "The current date is %Y-%m-%d.When you're", localtime(&now));
    const char * tail = "(e.g. \"What are some good restaurants around me?\" => \"Where are you?\" or \"When is the next "
                        "flight to Tokyo\" => \"Where do you travel from?\")[/SYSTEM_PROMPT][INST]a[/INST][INST]b[/INST]";
    const char * head = "[SYSTEM_PROMPT]You are Mistral Small 3, a Large Language Model (LLM) created by Mistral AI, a "
                        "French startup headquartered in Paris.Your knowledge base";
    TH_CHECK(out && strncmp(out, head, strlen(head)) == 0 &&
             strstr(out, today) && strlen(out) > strlen(tail) && strcmp(out + strlen(out) - strlen(tail), tail) == 0,
             "mistral small default system: %s", out ? out : err);
    free(out);
    json_decref(msgs);
    common_chat_jinja_free(cj);
}

int main(void) {
    snprintf(QWEN3, sizeof(QWEN3), "%s%s", QWEN3_PARTS[0], QWEN3_PARTS[1]);
    snprintf(MISTRAL_SMALL, sizeof(MISTRAL_SMALL), "%s%s%s", MISTRAL_SMALL_PARTS[0], MISTRAL_SMALL_PARTS[1],
             MISTRAL_SMALL_PARTS[2]);
    test_qwen3();
    test_mistral_small();
    int n_identical = 0, n_builtin = 0;
    for (size_t i = 0; i < sizeof(CASES) / sizeof(CASES[0]); i++) {
        const struct jinja_case * tc = &CASES[i];
        if (!tc->supported) {
            continue;
        }
        char err[512] = "";
        struct common_chat_jinja * cj = common_chat_jinja_init(tc->tmpl, tc->bos, tc->eos, err, sizeof(err));
        TH_CHECK(cj != NULL, "%s: parse failed: %s", tc->name, err);
        if (!cj) {
            continue;
        }
        json_t * msgs = messages_json(tc);
        char * out = common_chat_jinja_apply(cj, msgs, NULL, true, NULL, err, sizeof(err));
        TH_CHECK(out != NULL, "%s: render failed: %s", tc->name, err);
        if (out) {
            const bool same = strcmp(out, tc->expected) == 0;
            TH_CHECK(same, "%s:\n--- expected ---\n%s\n--- got ---\n%s\n", tc->name, tc->expected, out);
            n_identical += same;
            if (tc->builtin_agrees) {
                char * b = builtin_render(tc);
                TH_CHECK(b != NULL && strcmp(b, out) == 0, "%s: built-in template differs:\n%s\n", tc->name,
                         b ? b : "(failed)");
                n_builtin += b != NULL && strcmp(b, out) == 0;
                free(b);
            }
        }
        free(out);
        json_decref(msgs);
        common_chat_jinja_free(cj);
    }
    printf("%d of llama.cpp's templates render identically; %d also match the built-in formatter\n", n_identical,
           n_builtin);
    return th_finish();
}

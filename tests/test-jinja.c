// The Jinja interpreter (common/jinja) feature by feature. Every expected string is derived by hand from Jinja2's
// documented semantics with llama.cpp's chat-template settings (trim_blocks and lstrip_blocks on, one trailing
// newline of the template dropped); the whitespace cases are the ones llama.cpp's lexer comments describe.
#include "harness.h"

#include "jinja/jinja.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

// renders `tmpl` with the JSON object `ctx_json` (NULL = none) and checks the text
static void expect_render(const char * tmpl, const char * ctx_json, const char * expected, int line) {
    char err[512] = "";
    json_t * ctx = ctx_json ? json_loads(ctx_json, 0, NULL) : NULL;
    struct jinja_template * t = jinja_template_parse(tmpl, err, sizeof(err));
    char * out = t ? jinja_template_render(t, ctx, err, sizeof(err)) : NULL;
    TH_CHECK(out && strcmp(out, expected) == 0, "line %d: template %s\n  expected [%s]\n  got      [%s] %s", line,
             tmpl, expected, out ? out : "(null)", out ? "" : err);
    free(out);
    jinja_template_free(t);
    json_decref(ctx);
}

// parse or render must fail with a message containing `fragment`
static void expect_error(const char * tmpl, const char * ctx_json, const char * fragment, int line) {
    char err[512] = "";
    json_t * ctx = ctx_json ? json_loads(ctx_json, 0, NULL) : NULL;
    struct jinja_template * t = jinja_template_parse(tmpl, err, sizeof(err));
    char * out = t ? jinja_template_render(t, ctx, err, sizeof(err)) : NULL;
    TH_CHECK(out == NULL && strstr(err, fragment) != NULL, "line %d: template %s: expected an error with [%s], got [%s]%s",
             line, tmpl, fragment, err, out ? " (and output)" : "");
    free(out);
    jinja_template_free(t);
    json_decref(ctx);
}

#define R(tmpl, ctx, exp) expect_render(tmpl, ctx, exp, __LINE__)
#define E(tmpl, ctx, frag) expect_error(tmpl, ctx, frag, __LINE__)

static void test_text_and_output(void) {
    R("hello", NULL, "hello");
    R("", NULL, "");
    R("a\n", NULL, "a");           // one trailing newline dropped
    R("a\n\n", NULL, "a\n");
    R("a\r\nb", NULL, "a\nb");
    R("{{ 'x' }}{{ \"y\" }}", NULL, "xy");
    R("{{ 1 }} {{ 1.5 }} {{ 2.0 }} {{ true }} {{ none }}", NULL, "1 1.5 2.0 True None");
    R("{{ undefined_name }}|", NULL, "|");
    R("{# comment #}x", NULL, "x");
    R("{{ [1, 'a', none] }}", NULL, "[1, 'a', None]");
    R("{{ {'a': 1} }}", NULL, "{'a': 1}");
    R("{{ 'it\\'s' }}", NULL, "it's");
    R("{{ 'a\\nb\\tc' }}", NULL, "a\nb\tc");
    R("{{ 'a' 'b' }}", NULL, "ab");
    R("{{ x }}", "{\"x\": \"from json\"}", "from json");
    R("a{% raw %}{{ not evaluated }}{% if %}{% endraw %}b", NULL, "a{{ not evaluated }}{% if %}b");
}

static void test_whitespace(void) {
    // trim_blocks: the newline right after %} goes; after }} it stays
    R("{% if true %}\nyes\n{% endif %}\n", NULL, "yes\n");
    R("{{ 'a' }}\nb", NULL, "a\nb");
    // lstrip_blocks: indentation before {% goes, before {{ stays
    R("x\n    {% if true %}y{% endif %}", NULL, "x\ny");
    R("x\n    {{ 'y' }}", NULL, "x\n    y");
    // not from a line start: kept
    R("x  {% if true %}y{% endif %}", NULL, "x  y");
    // explicit - strips all whitespace, newlines included
    R("a  \n  {%- if true -%}  \n  b  \n  {%- endif -%}  \n  c", NULL, "abc");
    R("a \n {{- 'b' -}} \n c", NULL, "abc");
    R("a \n {#- c -#} \n b", NULL, "ab");
    // comment lines behave like blocks
    R("a\n{# c #}\nb", NULL, "a\nb");
    // a typical chat template body
    R("{%- for m in ms %}\n    {{- m }}\n{%- endfor %}\n", "{\"ms\": [1, 2]}", "12");
    R("{% for m in ms %}\n  <{{ m }}>\n{% endfor %}", "{\"ms\": [1, 2]}", "  <1>\n  <2>\n");
}

static void test_control(void) {
    R("{% if 0 %}a{% elif '' %}b{% elif [1] %}c{% else %}d{% endif %}", NULL, "c");
    R("{% if none %}a{% else %}b{% endif %}", NULL, "b");
    R("{% for x in [1,2,3] %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}"
      "{{ loop.first }}{{ loop.last }}{{ loop.length }};{% endfor %}",
      NULL, "1032TrueFalse3;2121FalseFalse3;3210FalseTrue3;");
    R("{% for x in [] %}a{% else %}empty{% endfor %}", NULL, "empty");
    R("{% for k, v in d.items() %}{{ k }}={{ v }},{% endfor %}", "{\"d\": {\"b\": 1, \"a\": 2}}", "b=1,a=2,");
    R("{% for k in d %}{{ k }}{% endfor %}", "{\"d\": {\"x\": 1, \"y\": 2}}", "xy");
    R("{% for a, b in [[1, 2], [3, 4]] %}{{ a + b }} {% endfor %}", NULL, "3 7 ");
    R("{% for x in range(5) if x is odd %}{{ x }}{{ loop.length }}{% endfor %}", NULL, "1232");
    R("{% for c in 'ab' %}[{{ c }}]{% endfor %}", NULL, "[a][b]");
    R("{% for x in range(10) %}{% if x == 3 %}{% break %}{% endif %}{% if x == 1 %}{% continue %}{% endif %}{{ x }}"
      "{% endfor %}", NULL, "02");
    R("{% for x in [1, 2] %}{{ loop.previtem }}-{{ loop.nextitem }};{% endfor %}", NULL, "-2;1-;");
    // nested loops have their own loop variable
    R("{% for a in [1, 2] %}{% for b in [1] %}{{ loop.length }}{% endfor %}{{ loop.length }}{% endfor %}", NULL, "1212");
}

static void test_set_and_scoping(void) {
    R("{% set x = 1 %}{{ x }}", NULL, "1");
    R("{% set a, b = 1, 2 %}{{ b }}{{ a }}", NULL, "21");
    // a set inside a loop does not leak; a namespace attribute does
    R("{% set x = 0 %}{% for i in [1, 2] %}{% set x = i %}{% endfor %}{{ x }}", NULL, "0");
    R("{% set ns = namespace(x=0) %}{% for i in [1, 2] %}{% set ns.x = ns.x + i %}{% endfor %}{{ ns.x }}", NULL, "3");
    R("{% set ns = namespace() %}{% set ns.flag = true %}{{ ns.flag }}", NULL, "True");
    R("{% set x %}a{{ 1 + 1 }}b{% endset %}[{{ x }}]", NULL, "[a2b]");
    // if does not open a scope
    R("{% if true %}{% set y = 5 %}{% endif %}{{ y }}", NULL, "5");
    R("{% set l = [] %}{% do l.append(1) %}{{ l.append(2) }}{{ l }}", NULL, "None[1, 2]");
}

static void test_macros(void) {
    R("{% macro greet(name, p='Hi') %}{{ p }} {{ name }}{% endmacro %}{{ greet('a') }}/{{ greet('b', p='Yo') }}", NULL,
      "Hi a/Yo b");
    R("{% macro m() %}<{{ caller() }}>{% endmacro %}{% call m() %}body{% endcall %}", NULL, "<body>");
    R("{% set g = 'G' %}{% macro m() %}{{ g }}{% endmacro %}{{ m() }}", NULL, "G");
}

static void test_operators(void) {
    R("{{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 2 ** 10 }}", NULL,
      "7 9 3 -4 1 2 1024");
    R("{{ 7 / 2 }} {{ 4 / 2 }} {{ 1 + 0.5 }}", NULL, "3.5 2.0 1.5");
    R("{{ 'a' + 'b' }} {{ 'a' ~ 1 ~ none }} {{ [1] + [2] }} {{ 'ab' * 2 }}", NULL, "ab a1None [1, 2] abab");
    R("{{ 1 < 2 }} {{ 2 <= 1 }} {{ 'a' < 'b' }} {{ 1 == 1.0 }} {{ 'a' != 'a' }}", NULL, "True False True True False");
    R("{{ 'b' in 'abc' }} {{ 2 in [1, 2] }} {{ 'k' in {'k': 1} }} {{ 3 not in [1] }}", NULL, "True True True True");
    R("{{ true and 'x' }} {{ false or 'y' }} {{ not 0 }} {{ not 1 and true }}", NULL, "x y True False");
    R("{{ 'y' if 1 else 'n' }} {{ 'y' if 0 else 'n' }} [{{ 'y' if 0 }}]", NULL, "y n []");
    // Jinja (unlike Python) binds unary minus tighter than ** and looser than filters
    R("{{ -3 }} {{ -(1 + 2) }} {{ - 2 ** 2 }} {{ -3 | abs }}", NULL, "-3 -3 4 -3");
    R("{{ {'a': {'b': [10, 20]}}.a.b[1] }} {{ {'a': 1}['a'] }} {{ [1, 2, 3][-1] }}", NULL, "20 1 3");
    // a code point per index, from either end; past the end is undefined (prints nothing)
    R("{{ 'h\u00e9llo'[1] }}{{ 'h\u00e9llo'[-1] }}{{ 'h\u00e9llo'[0] }}|{{ 'ab'[2] }}|", NULL, "\u00e9oh||");
    // integer powers are exact past 64 factors; an empty string repeated any number of times is empty (no loop)
    R("{{ (-1) ** 65 }} {{ 3 ** 3 }} {{ 2 ** 0 }} [{{ '' * 1000000000000000 }}]", NULL, "-1 27 1 []");
    R("{{ 'hello'[1:3] }} {{ 'hello'[::-1] }} {{ [1, 2, 3, 4][1:] }} {{ [1, 2, 3][:-1] }} {{ [1, 2, 3, 4][::2] }}",
      NULL, "el olleh [2, 3, 4] [1, 2] [1, 3]");
    R("{{ m.content }}|{{ m.missing }}|{{ m['role'] }}", "{\"m\": {\"role\": \"user\", \"content\": \"hi\"}}",
      "hi||user");
    R("{{ ({'a': [1, {'b': 2}]} == {'a': [1, {'b': 2}]}) }}", NULL, "True");
}

static void test_tests(void) {
    R("{{ x is defined }} {{ y is defined }} {{ y is undefined }} {{ x is not none }}", "{\"x\": 1}",
      "True False True True");
    R("{{ n is none }} {{ 's' is string }} {{ {} is mapping }} {{ [] is iterable }} {{ 's' is sequence }}",
      "{\"n\": null}", "True True True True True");
    R("{{ 1 is number }} {{ 1.5 is number }} {{ 's' is number }} {{ true is boolean }} {{ 1 is boolean }}", NULL,
      "True True False True False");
    R("{{ 3 is odd }} {{ 3 is even }} {{ 9 is divisibleby 3 }} {{ 'a' is equalto 'a' }} {{ 2 is in [1, 2] }}", NULL,
      "True False True True True");
    R("{{ 'abc' is lower }} {{ 'ABC' is upper }} {{ f is callable }}", "{\"f\": 1}", "True True False");
}

static void test_filters(void) {
    R("[{{ '  a b  ' | trim }}] {{ 'abc' | length }} {{ [1, 2] | length }} {{ {'a': 1} | count }}", NULL, "[a b] 3 2 1");
    R("{{ 'aBc' | upper }} {{ 'aBc' | lower }} {{ 'hello world' | capitalize }} {{ 'hello wORLD' | title }}", NULL,
      "ABC abc Hello world Hello World");
    R("{{ {'a': [1, 'x', none, true], 'b': 1.5} | tojson }}", NULL, "{\"a\": [1, \"x\", null, true], \"b\": 1.5}");
    R("{{ {'a': [1, 2], 'b': {}} | tojson(indent=2) }}", NULL, "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": {}\n}");
    R("{{ 'q\"\\\\\n' | tojson }}", NULL, "\"q\\\"\\\\\\n\"");
    R("{{ 'é' | tojson }} {{ 'é😀' | tojson(ensure_ascii=true) }}", NULL, "\"é\" \"\\u00e9\\ud83d\\ude00\"");
    R("{{ {'b': [1, 2], 'a': 1} | tojson(separators=(',', ':'), sort_keys=true) }}", NULL, "{\"a\":1,\"b\":[1,2]}");
    R("{{ 1 | string }}{{ [1] | string }} {{ '42' | int + 1 }} {{ 3.9 | int }} {{ 'x' | int }}", NULL, "1[1] 43 3 0");
    R("{{ [1, 2, 3] | join(', ') }} {{ ['a', 'b'] | join }} {{ ms | join('/', attribute='n') }}",
      "{\"ms\": [{\"n\": \"p\"}, {\"n\": \"q\"}]}", "1, 2, 3 ab p/q");
    R("{{ u | default('d') }} {{ '' | default('d') }} {{ '' | default('d', true) }} {{ none | d('x') }}", NULL,
      "d  d None");
    R("{{ [1, 2, 3] | first }} {{ [1, 2, 3] | last }} {{ 'abc' | first }}", NULL, "1 3 a");
    R("{{ {'a': 1, 'b': 2} | items | list }}", NULL, "[['a', 1], ['b', 2]]");
    R("{{ 'a-b-c' | replace('-', '+') }} {{ 'aaa' | replace('a', 'b', 2) }} {{ 'x' | safe }}", NULL, "a+b+c bba x");
    R("{{ ms | selectattr('role', 'equalto', 'user') | map(attribute='c') | list }} "
      "{{ ms | rejectattr('role', 'equalto', 'user') | map(attribute='c') | join }} "
      "{{ ms | selectattr('flag') | list | length }} {{ ms | map(attribute='c') | map('upper') | join }}",
      "{\"ms\": [{\"role\": \"user\", \"c\": \"a\"}, {\"role\": \"bot\", \"c\": \"b\", \"flag\": true},"
      " {\"role\": \"user\", \"c\": \"c\"}]}",
      "['a', 'c'] b 1 ABC");
    R("{{ [3, 1, 3, 2] | unique | list }} {{ [3, 1, 2] | sort }} {{ [1, 2] | reverse | list }} {{ [1, 2, 3] | sum }}",
      NULL, "[3, 1, 2] [1, 2, 3] [2, 1] 6");
    R("{{ [1, 0, 2] | select | list }} {{ [1, 2, 3, 4] | reject('odd') | list }} {{ (-3) | abs }}", NULL,
      "[1, 2] [2, 4] 3");
    R("{{ 'a\nb' | indent(2) }}|{{ 'a\nb' | indent(2, true) }}", NULL, "a\n  b|  a\n  b");
    R("{% filter upper %}abc{% endfilter %}", NULL, "ABC");
}

static void test_methods(void) {
    R("{{ '  x  '.strip() }}|{{ 'xxaxx'.strip('x') }}|{{ '  x'.lstrip() }}|{{ 'x  '.rstrip() }}|", NULL,
      "x|a|x|x|");
    R("{{ 'abc'.startswith('ab') }} {{ 'abc'.endswith('bc') }} {{ 'abc'.startswith(('x', 'a')) }}", NULL,
      "True True True");
    R("{{ 'a,b,,c'.split(',') }} {{ ' a  b '.split() }} {{ 'a b c'.split(' ', 1) }}", NULL,
      "['a', 'b', '', 'c'] ['a', 'b'] ['a', 'b c']");
    R("{{ 'aBc'.upper() }} {{ 'aBc'.lower() }} {{ 'ab cd'.title() }} {{ 'abc'.replace('b', 'x') }}", NULL,
      "ABC abc Ab Cd axc");
    R("{{ '{} and {}'.format(1, 'b') }} {{ '{x}!'.format(x=3) }} {{ ', '.join(['a', 'b']) }}", NULL, "1 and b 3! a, b");
    R("{{ d.get('a') }} {{ d.get('z') }} {{ d.get('z', 0) }} {{ d.keys() | list }} {{ d.values() | list }}",
      "{\"d\": {\"a\": 1}}", "1 None 0 ['a'] [1]");
    R("{{ 'abc'.find('c') }} {{ 'abc'.find('z') }} {{ 'aXbX'.count('X') }}", NULL, "2 -1 2");
}

static void test_globals(void) {
    R("{{ range(3) | list }} {{ range(1, 7, 2) | list }} {{ range(3, 0, -1) | list }}", NULL,
      "[0, 1, 2] [1, 3, 5] [3, 2, 1]");
    R("{{ bos_token }}{{ messages[0].content }}{% if add_generation_prompt %}<gen>{% endif %}",
      "{\"bos_token\": \"<s>\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}], \"add_generation_prompt\": true}",
      "<s>hi<gen>");
    // strftime_now: only the shape can be checked (the date changes)
    char err[256];
    struct jinja_template * t = jinja_template_parse("{{ strftime_now('%Y') | length }}", err, sizeof(err));
    char * out = t ? jinja_template_render(t, NULL, err, sizeof(err)) : NULL;
    TH_CHECK(out && strcmp(out, "4") == 0, "strftime_now: %s", out ? out : err);
    free(out);
    jinja_template_free(t);
    R("{{ dict(a=1).a }}", NULL, "1");
}

static void test_errors(void) {
    E("{{ raise_exception('Roles must alternate') }}", NULL, "Roles must alternate");
    E("{% if x %}", NULL, "line 1");
    E("{% if x %}", NULL, "unexpected end of template");
    E("a\n{{ 1 + }}", NULL, "line 2, column");
    E("{{ 'abc }}", NULL, "unterminated string");
    E("{% for %}{% endfor %}", NULL, "expected");
    E("{% endfor %}", NULL, "unexpected");
    E("{% frobnicate %}", NULL, "unknown statement");
    E("{{ x | nosuchfilter }}", NULL, "unknown filter");
    E("{{ x is nosuchtest }}", NULL, "unknown test");
    E("{{ nosuchfn() }}", NULL, "undefined");
    E("{{ 1 / 0 }}", NULL, "division by zero");
    E("{{ 'a' + 1 }}", NULL, "unsupported operand");
    E("{{ 'a' < 1 }}", NULL, "cannot compare");
    E("{# never closed", NULL, "unclosed comment");
    E("{{ x", NULL, "unclosed");
    // resource limits end with an error instead of running away
    E("{% set r = range(10000) %}{% for i in r %}{% for j in r %}{% endfor %}{% endfor %}", NULL, "too long");
    E("{% for i in range(1000) %}{% for j in range(1000) %}xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx{% endfor %}"
      "{% endfor %}", NULL, "exceeds");
    E("{% set l = [] %}{% do l.append(l) %}{{ l }}", NULL, "nested too deeply");
    E("{% set l = [] %}{% do l.append(l) %}{{ l < l }}", NULL, "nested too deeply");
    R("{% set l = [] %}{% do l.append(l) %}{{ l == [] }}", NULL, "False");
    E("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", NULL, "nested too deeply");
    E("{% set ns = namespace(s='xxxxxxxxxxxxxxxx') %}{% for i in range(30) %}{% set ns.s = ns.s + ns.s %}{% endfor %}", NULL,
      "too much memory");
}

int main(void) {
    test_text_and_output();
    test_whitespace();
    test_control();
    test_set_and_scoping();
    test_macros();
    test_operators();
    test_tests();
    test_filters();
    test_methods();
    test_globals();
    test_errors();
    return th_finish();
}

// json_schema_to_grammar (common/json-schema-to-grammar.c): schema -> GBNF text.
//
// LLAMA_CPP_CASES are llama.cpp's own test pairs (tests/test-json-schema-to-grammar.cpp in llama.cpp: the
// test({...}) cases of test_all plus the two "C++ only" pattern cases), schema and expected grammar copied
// verbatim (indentation removed, as its trim() does): the expected strings are llama.cpp's output. The
// other cases check what this port adds or refuses where llama.cpp emits an unparseable grammar or loops;
// their expected grammars were worked out by hand from llama.cpp's rules.
#include "harness.h"

#include "json-schema-to-grammar.h"
#include "llama-grammar.h"

#include <jansson.h>

struct jsg_case {
    bool ok;
    const char * name;
    const char * schema;
    const char * expected; // ok: the exact grammar; !ok: unused
};

static const struct jsg_case LLAMA_CPP_CASES[] = {
    { true, "min 0",
        "{\"type\": \"integer\", \"minimum\": 0}",
        "root ::= ([0] | [1-9] [0-9]{0,15}) space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "min 1",
        "{\"type\": \"integer\", \"minimum\": 1}",
        "root ::= ([1-9] [0-9]{0,15}) space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "min 3",
        "{\"type\": \"integer\", \"minimum\": 3}",
        "root ::= ([1-2] [0-9]{1,15} | [3-9] [0-9]{0,15}) space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "min 9",
        "{\"type\": \"integer\", \"minimum\": 9}",
        "root ::= ([1-8] [0-9]{1,15} | [9] [0-9]{0,15}) space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "min 10",
        "{\"type\": \"integer\", \"minimum\": 10}",
        "root ::= ([1] ([0-9]{1,15}) | [2-9] [0-9]{1,15}) space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "min 25",
        "{\"type\": \"integer\", \"minimum\": 25}",
        "root ::= ([1] [0-9]{2,15} | [2] ([0-4] [0-9]{1,14} | [5-9] [0-9]{0,14}) | [3-9] [0-9]{1,15}) space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "max 30",
        "{\"type\": \"integer\", \"maximum\": 30}",
        "root ::= (\"-\" [1-9] [0-9]{0,15} | [0-9] | ([1-2] [0-9] | [3] \"0\")) space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "min -5",
        "{\"type\": \"integer\", \"minimum\": -5}",
        "root ::= (\"-\" ([0-5]) | [0] | [1-9] [0-9]{0,15}) space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "min -123",
        "{\"type\": \"integer\", \"minimum\": -123}",
        "root ::= (\"-\" ([0-9] | ([1-8] [0-9] | [9] [0-9]) | \"1\" ([0-1] [0-9] | [2] [0-3])) | [0] | [1-9] [0-9]{0,15}) space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "max -5",
        "{\"type\": \"integer\", \"maximum\": -5}",
        "root ::= (\"-\" ([0-4] [0-9]{1,15} | [5-9] [0-9]{0,15})) space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "max 1",
        "{\"type\": \"integer\", \"maximum\": 1}",
        "root ::= (\"-\" [1-9] [0-9]{0,15} | [0-1]) space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "max 100",
        "{\"type\": \"integer\", \"maximum\": 100}",
        "root ::= (\"-\" [1-9] [0-9]{0,15} | [0-9] | ([1-8] [0-9] | [9] [0-9]) | \"100\") space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "min 0 max 23",
        "{\"type\": \"integer\", \"minimum\": 0, \"maximum\": 23}",
        "root ::= ([0-9] | ([1] [0-9] | [2] [0-3])) space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "min 15 max 300",
        "{\"type\": \"integer\", \"minimum\": 15, \"maximum\": 300}",
        "root ::= (([1] ([5-9]) | [2-9] [0-9]) | ([1-2] [0-9]{2} | [3] \"00\")) space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "min 5 max 30",
        "{\"type\": \"integer\", \"minimum\": 5, \"maximum\": 30}",
        "root ::= ([5-9] | ([1-2] [0-9] | [3] \"0\")) space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "min -123 max 42",
        "{\"type\": \"integer\", \"minimum\": -123, \"maximum\": 42}",
        "root ::= (\"-\" ([0-9] | ([1-8] [0-9] | [9] [0-9]) | \"1\" ([0-1] [0-9] | [2] [0-3])) | [0-9] | ([1-3] [0-9] | [4] [0-2])) space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "min -10 max 10",
        "{\"type\": \"integer\", \"minimum\": -10, \"maximum\": 10}",
        "root ::= (\"-\" ([0-9] | \"10\") | [0-9] | \"10\") space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { false, "unknown type",
        "{\"type\": \"kaboom\"}",
        "" },
    { false, "invalid type",
        "{\"type\": 123}",
        "" },
    { true, "empty schema (object)",
        "{}",
        "array ::= \"[\" space ( value (\",\" space value)* )? \"]\" space\n"
        "boolean ::= (\"true\" | \"false\") space\n"
        "char ::= [^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})\n"
        "decimal-part ::= [0-9]{1,16}\n"
        "integral-part ::= [0] | [1-9] [0-9]{0,15}\n"
        "null ::= \"null\" space\n"
        "number ::= (\"-\"? integral-part) (\".\" decimal-part)? ([eE] [-+]? integral-part)? space\n"
        "object ::= \"{\" space ( string \":\" space value (\",\" space string \":\" space value)* )? \"}\" space\n"
        "root ::= object\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n"
        "string ::= \"\\\"\" char* \"\\\"\" space\n"
        "value ::= object | array | string | number | boolean | null\n" },
    { true, "exotic formats",
        "{\"items\": [{ \"format\": \"date\" }, { \"format\": \"uuid\" }, { \"format\": \"time\" }, { \"format\": \"date-time\" }]}",
        "date ::= [0-9]{4} \"-\" ( \"0\" [1-9] | \"1\" [0-2] ) \"-\" ( \"0\" [1-9] | [1-2] [0-9] | \"3\" [0-1] )\n"
        "date-string ::= \"\\\"\" date \"\\\"\" space\n"
        "date-time ::= date \"T\" time\n"
        "date-time-string ::= \"\\\"\" date-time \"\\\"\" space\n"
        "root ::= \"[\" space tuple-0 \",\" space uuid \",\" space tuple-2 \",\" space tuple-3 \"]\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n"
        "time ::= ([01] [0-9] | \"2\" [0-3]) \":\" [0-5] [0-9] \":\" [0-5] [0-9] ( \".\" [0-9]{3} )? ( \"Z\" | ( \"+\" | \"-\" ) ( [01] [0-9] | \"2\" [0-3] ) \":\" [0-5] [0-9] )\n"
        "time-string ::= \"\\\"\" time \"\\\"\" space\n"
        "tuple-0 ::= date-string\n"
        "tuple-2 ::= time-string\n"
        "tuple-3 ::= date-time-string\n"
        "uuid ::= \"\\\"\" [0-9a-fA-F]{8} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{12} \"\\\"\" space\n" },
    { true, "string",
        "{\"type\": \"string\"}",
        "char ::= [^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})\n"
        "root ::= \"\\\"\" char* \"\\\"\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "string w/ min length 1",
        "{\"type\": \"string\", \"minLength\": 1}",
        "char ::= [^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})\n"
        "root ::= \"\\\"\" char+ \"\\\"\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "string w/ min length 3",
        "{\"type\": \"string\", \"minLength\": 3}",
        "char ::= [^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})\n"
        "root ::= \"\\\"\" char{3,} \"\\\"\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "string w/ max length",
        "{\"type\": \"string\", \"maxLength\": 3}",
        "char ::= [^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})\n"
        "root ::= \"\\\"\" char{0,3} \"\\\"\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "string w/ min & max length",
        "{\"type\": \"string\", \"minLength\": 1, \"maxLength\": 4}",
        "char ::= [^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})\n"
        "root ::= \"\\\"\" char{1,4} \"\\\"\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "boolean",
        "{\"type\": \"boolean\"}",
        "root ::= (\"true\" | \"false\") space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "integer",
        "{\"type\": \"integer\"}",
        "integral-part ::= [0] | [1-9] [0-9]{0,15}\n"
        "root ::= (\"-\"? integral-part) space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "string const",
        "{\"const\": \"foo\"}",
        "root ::= \"\\\"foo\\\"\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "non-string const",
        "{\"const\": 123}",
        "root ::= \"123\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "non-string enum",
        "{\"enum\": [\"red\", \"amber\", \"green\", null, 42, [\"foo\"]]}",
        "root ::= (\"\\\"red\\\"\" | \"\\\"amber\\\"\" | \"\\\"green\\\"\" | \"null\" | \"42\" | \"[\\\"foo\\\"]\") space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "string array",
        "{\"type\": \"array\", \"prefixItems\": { \"type\": \"string\" }}",
        "char ::= [^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})\n"
        "root ::= \"[\" space (string (\",\" space string)*)? \"]\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n"
        "string ::= \"\\\"\" char* \"\\\"\" space\n" },
    { true, "nullable string array",
        "{\"type\": [\"array\", \"null\"], \"prefixItems\": { \"type\": \"string\" }}",
        "alternative-0 ::= \"[\" space (string (\",\" space string)*)? \"]\" space\n"
        "char ::= [^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})\n"
        "null ::= \"null\" space\n"
        "root ::= alternative-0 | null\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n"
        "string ::= \"\\\"\" char* \"\\\"\" space\n" },
    { true, "tuple1",
        "{\"prefixItems\": [{ \"type\": \"string\" }]}",
        "char ::= [^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})\n"
        "root ::= \"[\" space string \"]\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n"
        "string ::= \"\\\"\" char* \"\\\"\" space\n" },
    { true, "tuple2",
        "{\"prefixItems\": [{ \"type\": \"string\" }, { \"type\": \"number\" }]}",
        "char ::= [^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})\n"
        "decimal-part ::= [0-9]{1,16}\n"
        "integral-part ::= [0] | [1-9] [0-9]{0,15}\n"
        "number ::= (\"-\"? integral-part) (\".\" decimal-part)? ([eE] [-+]? integral-part)? space\n"
        "root ::= \"[\" space string \",\" space number \"]\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n"
        "string ::= \"\\\"\" char* \"\\\"\" space\n" },
    { true, "array with empty items",
        "{\"type\": \"array\", \"items\": {}}",
        "array ::= \"[\" space ( value (\",\" space value)* )? \"]\" space\n"
        "boolean ::= (\"true\" | \"false\") space\n"
        "char ::= [^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})\n"
        "decimal-part ::= [0-9]{1,16}\n"
        "integral-part ::= [0] | [1-9] [0-9]{0,15}\n"
        "item ::= object\n"
        "null ::= \"null\" space\n"
        "number ::= (\"-\"? integral-part) (\".\" decimal-part)? ([eE] [-+]? integral-part)? space\n"
        "object ::= \"{\" space ( string \":\" space value (\",\" space string \":\" space value)* )? \"}\" space\n"
        "root ::= \"[\" space (item (\",\" space item)*)? \"]\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n"
        "string ::= \"\\\"\" char* \"\\\"\" space\n"
        "value ::= object | array | string | number | boolean | null\n" },
    { true, "array with empty items and prefixItems",
        "{\"type\": \"array\", \"items\": {}, \"prefixItems\": { \"type\": \"string\" }}",
        "array ::= \"[\" space ( value (\",\" space value)* )? \"]\" space\n"
        "boolean ::= (\"true\" | \"false\") space\n"
        "char ::= [^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})\n"
        "decimal-part ::= [0-9]{1,16}\n"
        "integral-part ::= [0] | [1-9] [0-9]{0,15}\n"
        "item ::= object\n"
        "null ::= \"null\" space\n"
        "number ::= (\"-\"? integral-part) (\".\" decimal-part)? ([eE] [-+]? integral-part)? space\n"
        "object ::= \"{\" space ( string \":\" space value (\",\" space string \":\" space value)* )? \"}\" space\n"
        "root ::= \"[\" space (item (\",\" space item)*)? \"]\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n"
        "string ::= \"\\\"\" char* \"\\\"\" space\n"
        "value ::= object | array | string | number | boolean | null\n" },
    { true, "number",
        "{\"type\": \"number\"}",
        "decimal-part ::= [0-9]{1,16}\n"
        "integral-part ::= [0] | [1-9] [0-9]{0,15}\n"
        "root ::= (\"-\"? integral-part) (\".\" decimal-part)? ([eE] [-+]? integral-part)? space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "minItems",
        "{\"items\": {\"type\": \"boolean\"}, \"minItems\": 2}",
        "boolean ::= (\"true\" | \"false\") space\n"
        "root ::= \"[\" space boolean (\",\" space boolean)+ \"]\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "maxItems 0",
        "{\"items\": {\"type\": \"boolean\"}, \"maxItems\": 0}",
        "boolean ::= (\"true\" | \"false\") space\n"
        "root ::= \"[\" space  \"]\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "maxItems 1",
        "{\"items\": {\"type\": \"boolean\"}, \"maxItems\": 1}",
        "boolean ::= (\"true\" | \"false\") space\n"
        "root ::= \"[\" space boolean? \"]\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "maxItems 2",
        "{\"items\": {\"type\": \"boolean\"}, \"maxItems\": 2}",
        "boolean ::= (\"true\" | \"false\") space\n"
        "root ::= \"[\" space (boolean (\",\" space boolean)?)? \"]\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "min + maxItems",
        "{\"items\": {\"type\": [\"number\", \"integer\"]}, \"minItems\": 3, \"maxItems\": 5}",
        "decimal-part ::= [0-9]{1,16}\n"
        "integer ::= (\"-\"? integral-part) space\n"
        "integral-part ::= [0] | [1-9] [0-9]{0,15}\n"
        "item ::= number | integer\n"
        "number ::= (\"-\"? integral-part) (\".\" decimal-part)? ([eE] [-+]? integral-part)? space\n"
        "root ::= \"[\" space item (\",\" space item){2,4} \"]\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "min + max items with min + max values across zero",
        "{\"items\": {\"type\": \"integer\", \"minimum\": -12, \"maximum\": 207}, \"minItems\": 3, \"maxItems\": 5}",
        "item ::= (\"-\" ([0-9] | \"1\" [0-2]) | [0-9] | ([1-8] [0-9] | [9] [0-9]) | ([1] [0-9]{2} | [2] \"0\" [0-7])) space\n"
        "root ::= \"[\" space item (\",\" space item){2,4} \"]\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "min + max items with min + max values",
        "{\"items\": {\"type\": \"integer\", \"minimum\": 12, \"maximum\": 207}, \"minItems\": 3, \"maxItems\": 5}",
        "item ::= (([1] ([2-9]) | [2-9] [0-9]) | ([1] [0-9]{2} | [2] \"0\" [0-7])) space\n"
        "root ::= \"[\" space item (\",\" space item){2,4} \"]\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "simple regexp",
        "{\"type\": \"string\", \"pattern\": \"^abc?d*efg+(hij)?kl$\"}",
        "root ::= \"\\\"\" (\"ab\" \"c\"? \"d\"* \"ef\" \"g\"+ (\"hij\")? \"kl\") \"\\\"\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "regexp escapes",
        "{\"type\": \"string\", \"pattern\": \"^\\\\[\\\\]\\\\{\\\\}\\\\(\\\\)\\\\|\\\\+\\\\*\\\\?$\"}",
        "root ::= \"\\\"\" (\"[]{}()|+*?\") \"\\\"\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "regexp quote",
        "{\"type\": \"string\", \"pattern\": \"^\\\"$\"}",
        "root ::= \"\\\"\" (\"\\\"\") \"\\\"\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "regexp with top-level alternation",
        "{\"type\": \"string\", \"pattern\": \"^A|B|C|D$\"}",
        "root ::= \"\\\"\" (\"A\" | \"B\" | \"C\" | \"D\") \"\\\"\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "regexp",
        "{\"type\": \"string\", \"pattern\": \"^(\\\\([0-9]{1,3}\\\\))?[0-9]{3}-[0-9]{4} a{3,5}nd...$\"}",
        "dot ::= [^\\x0A\\x0D]\n"
        "root ::= \"\\\"\" ((\"(\" root-1{1,3} \")\")? root-1{3,3} \"-\" root-1{4,4} \" \" \"a\"{3,5} \"nd\" dot dot dot) \"\\\"\" space\n"
        "root-1 ::= [0-9]\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "required props in original order",
        "{\"type\": \"object\", \"properties\": {\"b\": {\"type\": \"string\"}, \"c\": {\"type\": \"string\"}, \"a\": {\"type\": \"string\"}}, \"required\": [\"a\", \"b\", \"c\"], \"additionalProperties\": false, \"definitions\": {}}",
        "a-kv ::= \"\\\"a\\\"\" space \":\" space string\n"
        "b-kv ::= \"\\\"b\\\"\" space \":\" space string\n"
        "c-kv ::= \"\\\"c\\\"\" space \":\" space string\n"
        "char ::= [^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})\n"
        "root ::= \"{\" space b-kv \",\" space c-kv \",\" space a-kv \"}\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n"
        "string ::= \"\\\"\" char* \"\\\"\" space\n" },
    { true, "1 optional prop",
        "{\"properties\": {\"a\": {\"type\": \"string\"}}, \"additionalProperties\": false}",
        "a-kv ::= \"\\\"a\\\"\" space \":\" space string\n"
        "char ::= [^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})\n"
        "root ::= \"{\" space  (a-kv )? \"}\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n"
        "string ::= \"\\\"\" char* \"\\\"\" space\n" },
    { true, "N optional props",
        "{\"properties\": {\"a\": {\"type\": \"string\"}, \"b\": {\"type\": \"string\"}, \"c\": {\"type\": \"string\"}}, \"additionalProperties\": false}",
        "a-kv ::= \"\\\"a\\\"\" space \":\" space string\n"
        "a-rest ::= ( \",\" space b-kv )? b-rest\n"
        "b-kv ::= \"\\\"b\\\"\" space \":\" space string\n"
        "b-rest ::= ( \",\" space c-kv )?\n"
        "c-kv ::= \"\\\"c\\\"\" space \":\" space string\n"
        "char ::= [^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})\n"
        "root ::= \"{\" space  (a-kv a-rest | b-kv b-rest | c-kv )? \"}\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n"
        "string ::= \"\\\"\" char* \"\\\"\" space\n" },
    { true, "required + optional props each in original order",
        "{\"properties\": {\"b\": {\"type\": \"string\"}, \"a\": {\"type\": \"string\"}, \"d\": {\"type\": \"string\"}, \"c\": {\"type\": \"string\"}}, \"required\": [\"a\", \"b\"], \"additionalProperties\": false}",
        "a-kv ::= \"\\\"a\\\"\" space \":\" space string\n"
        "b-kv ::= \"\\\"b\\\"\" space \":\" space string\n"
        "c-kv ::= \"\\\"c\\\"\" space \":\" space string\n"
        "char ::= [^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})\n"
        "d-kv ::= \"\\\"d\\\"\" space \":\" space string\n"
        "d-rest ::= ( \",\" space c-kv )?\n"
        "root ::= \"{\" space b-kv \",\" space a-kv ( \",\" space ( d-kv d-rest | c-kv ) )? \"}\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n"
        "string ::= \"\\\"\" char* \"\\\"\" space\n" },
    { true, "additional props",
        "{\"type\": \"object\", \"additionalProperties\": {\"type\": \"array\", \"items\": {\"type\": \"number\"}}}",
        "additional-kv ::= string \":\" space additional-value\n"
        "additional-value ::= \"[\" space (number (\",\" space number)*)? \"]\" space\n"
        "char ::= [^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})\n"
        "decimal-part ::= [0-9]{1,16}\n"
        "integral-part ::= [0] | [1-9] [0-9]{0,15}\n"
        "number ::= (\"-\"? integral-part) (\".\" decimal-part)? ([eE] [-+]? integral-part)? space\n"
        "root ::= \"{\" space  (additional-kv ( \",\" space additional-kv )* )? \"}\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n"
        "string ::= \"\\\"\" char* \"\\\"\" space\n" },
    { true, "additional props (true)",
        "{\"type\": \"object\", \"additionalProperties\": true}",
        "array ::= \"[\" space ( value (\",\" space value)* )? \"]\" space\n"
        "boolean ::= (\"true\" | \"false\") space\n"
        "char ::= [^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})\n"
        "decimal-part ::= [0-9]{1,16}\n"
        "integral-part ::= [0] | [1-9] [0-9]{0,15}\n"
        "null ::= \"null\" space\n"
        "number ::= (\"-\"? integral-part) (\".\" decimal-part)? ([eE] [-+]? integral-part)? space\n"
        "object ::= \"{\" space ( string \":\" space value (\",\" space string \":\" space value)* )? \"}\" space\n"
        "root ::= object\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n"
        "string ::= \"\\\"\" char* \"\\\"\" space\n"
        "value ::= object | array | string | number | boolean | null\n" },
    { true, "additional props (implicit)",
        "{\"type\": \"object\"}",
        "array ::= \"[\" space ( value (\",\" space value)* )? \"]\" space\n"
        "boolean ::= (\"true\" | \"false\") space\n"
        "char ::= [^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})\n"
        "decimal-part ::= [0-9]{1,16}\n"
        "integral-part ::= [0] | [1-9] [0-9]{0,15}\n"
        "null ::= \"null\" space\n"
        "number ::= (\"-\"? integral-part) (\".\" decimal-part)? ([eE] [-+]? integral-part)? space\n"
        "object ::= \"{\" space ( string \":\" space value (\",\" space string \":\" space value)* )? \"}\" space\n"
        "root ::= object\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n"
        "string ::= \"\\\"\" char* \"\\\"\" space\n"
        "value ::= object | array | string | number | boolean | null\n" },
    { true, "empty w/o additional props",
        "{\"type\": \"object\", \"additionalProperties\": false}",
        "root ::= \"{\" space  \"}\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "required + additional props",
        "{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"number\"}}, \"required\": [\"a\"], \"additionalProperties\": {\"type\": \"string\"}}",
        "a-kv ::= \"\\\"a\\\"\" space \":\" space number\n"
        "additional-k ::= [\"] ( [a] char+ | [^\"a] char* )? [\"] space\n"
        "additional-kv ::= additional-k \":\" space string\n"
        "char ::= [^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})\n"
        "decimal-part ::= [0-9]{1,16}\n"
        "integral-part ::= [0] | [1-9] [0-9]{0,15}\n"
        "number ::= (\"-\"? integral-part) (\".\" decimal-part)? ([eE] [-+]? integral-part)? space\n"
        "root ::= \"{\" space a-kv ( \",\" space ( additional-kv ( \",\" space additional-kv )* ) )? \"}\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n"
        "string ::= \"\\\"\" char* \"\\\"\" space\n" },
    { true, "optional + additional props",
        "{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"number\"}}, \"additionalProperties\": {\"type\": \"number\"}}",
        "a-kv ::= \"\\\"a\\\"\" space \":\" space number\n"
        "a-rest ::= ( \",\" space additional-kv )*\n"
        "additional-k ::= [\"] ( [a] char+ | [^\"a] char* )? [\"] space\n"
        "additional-kv ::= additional-k \":\" space number\n"
        "char ::= [^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})\n"
        "decimal-part ::= [0-9]{1,16}\n"
        "integral-part ::= [0] | [1-9] [0-9]{0,15}\n"
        "number ::= (\"-\"? integral-part) (\".\" decimal-part)? ([eE] [-+]? integral-part)? space\n"
        "root ::= \"{\" space  (a-kv a-rest | additional-kv ( \",\" space additional-kv )* )? \"}\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "required + optional + additional props",
        "{\"type\": \"object\", \"properties\": {\"and\": {\"type\": \"number\"}, \"also\": {\"type\": \"number\"}}, \"required\": [\"and\"], \"additionalProperties\": {\"type\": \"number\"}}",
        "additional-k ::= [\"] ( [a] ([l] ([s] ([o] char+ | [^\"o] char*) | [^\"s] char*) | [n] ([d] char+ | [^\"d] char*) | [^\"ln] char*) | [^\"a] char* )? [\"] space\n"
        "additional-kv ::= additional-k \":\" space number\n"
        "also-kv ::= \"\\\"also\\\"\" space \":\" space number\n"
        "also-rest ::= ( \",\" space additional-kv )*\n"
        "and-kv ::= \"\\\"and\\\"\" space \":\" space number\n"
        "char ::= [^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})\n"
        "decimal-part ::= [0-9]{1,16}\n"
        "integral-part ::= [0] | [1-9] [0-9]{0,15}\n"
        "number ::= (\"-\"? integral-part) (\".\" decimal-part)? ([eE] [-+]? integral-part)? space\n"
        "root ::= \"{\" space and-kv ( \",\" space ( also-kv also-rest | additional-kv ( \",\" space additional-kv )* ) )? \"}\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "optional props with empty name",
        "{\"properties\": {\"\": {\"type\": \"integer\"}, \"a\": {\"type\": \"integer\"}}, \"additionalProperties\": {\"type\": \"integer\"}}",
        "-kv ::= \"\\\"\\\"\" space \":\" space root\n"
        "-rest ::= ( \",\" space a-kv )? a-rest\n"
        "a-kv ::= \"\\\"a\\\"\" space \":\" space integer\n"
        "a-rest ::= ( \",\" space additional-kv )*\n"
        "additional-k ::= [\"] ( [a] char+ | [^\"a] char* ) [\"] space\n"
        "additional-kv ::= additional-k \":\" space integer\n"
        "char ::= [^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})\n"
        "integer ::= (\"-\"? integral-part) space\n"
        "integral-part ::= [0] | [1-9] [0-9]{0,15}\n"
        "root ::= (\"-\"? integral-part) space\n"
        "root0 ::= \"{\" space  (-kv -rest | a-kv a-rest | additional-kv ( \",\" space additional-kv )* )? \"}\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "optional props with nested names",
        "{\"properties\": {\"a\": {\"type\": \"integer\"}, \"aa\": {\"type\": \"integer\"}}, \"additionalProperties\": {\"type\": \"integer\"}}",
        "a-kv ::= \"\\\"a\\\"\" space \":\" space integer\n"
        "a-rest ::= ( \",\" space aa-kv )? aa-rest\n"
        "aa-kv ::= \"\\\"aa\\\"\" space \":\" space integer\n"
        "aa-rest ::= ( \",\" space additional-kv )*\n"
        "additional-k ::= [\"] ( [a] ([a] char+ | [^\"a] char*) | [^\"a] char* )? [\"] space\n"
        "additional-kv ::= additional-k \":\" space integer\n"
        "char ::= [^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})\n"
        "integer ::= (\"-\"? integral-part) space\n"
        "integral-part ::= [0] | [1-9] [0-9]{0,15}\n"
        "root ::= \"{\" space  (a-kv a-rest | aa-kv aa-rest | additional-kv ( \",\" space additional-kv )* )? \"}\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "optional props with common prefix",
        "{\"properties\": {\"ab\": {\"type\": \"integer\"}, \"ac\": {\"type\": \"integer\"}}, \"additionalProperties\": {\"type\": \"integer\"}}",
        "ab-kv ::= \"\\\"ab\\\"\" space \":\" space integer\n"
        "ab-rest ::= ( \",\" space ac-kv )? ac-rest\n"
        "ac-kv ::= \"\\\"ac\\\"\" space \":\" space integer\n"
        "ac-rest ::= ( \",\" space additional-kv )*\n"
        "additional-k ::= [\"] ( [a] ([b] char+ | [c] char+ | [^\"bc] char*) | [^\"a] char* )? [\"] space\n"
        "additional-kv ::= additional-k \":\" space integer\n"
        "char ::= [^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})\n"
        "integer ::= (\"-\"? integral-part) space\n"
        "integral-part ::= [0] | [1-9] [0-9]{0,15}\n"
        "root ::= \"{\" space  (ab-kv ab-rest | ac-kv ac-rest | additional-kv ( \",\" space additional-kv )* )? \"}\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "top-level $ref",
        "{\"$ref\": \"#/definitions/foo\", \"definitions\": {\"foo\": {\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"string\"}}, \"required\": [\"a\"], \"additionalProperties\": false}}}",
        "char ::= [^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})\n"
        "ref-definitions-foo ::= \"{\" space ref-definitions-foo-a-kv \"}\" space\n"
        "ref-definitions-foo-a-kv ::= \"\\\"a\\\"\" space \":\" space string\n"
        "root ::= ref-definitions-foo\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n"
        "string ::= \"\\\"\" char* \"\\\"\" space\n" },
    { true, "anyOf",
        "{\"anyOf\": [{\"$ref\": \"#/definitions/foo\"}, {\"$ref\": \"#/definitions/bar\"}], \"definitions\": {\"foo\": {\"properties\": {\"a\": {\"type\": \"number\"}}}, \"bar\": {\"properties\": {\"b\": {\"type\": \"number\"}}}}, \"type\": \"object\"}",
        "alternative-0 ::= ref-definitions-foo\n"
        "alternative-1 ::= ref-definitions-bar\n"
        "decimal-part ::= [0-9]{1,16}\n"
        "integral-part ::= [0] | [1-9] [0-9]{0,15}\n"
        "number ::= (\"-\"? integral-part) (\".\" decimal-part)? ([eE] [-+]? integral-part)? space\n"
        "ref-definitions-bar ::= \"{\" space  (ref-definitions-bar-b-kv )? \"}\" space\n"
        "ref-definitions-bar-b-kv ::= \"\\\"b\\\"\" space \":\" space number\n"
        "ref-definitions-foo ::= \"{\" space  (ref-definitions-foo-a-kv )? \"}\" space\n"
        "ref-definitions-foo-a-kv ::= \"\\\"a\\\"\" space \":\" space number\n"
        "root ::= alternative-0 | alternative-1\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "anyOf $ref",
        "{\"properties\": {\"a\": {\"anyOf\": [{\"type\": \"string\"}, {\"type\": \"number\"}]}, \"b\": {\"anyOf\": [{\"$ref\": \"#/properties/a/anyOf/0\"}, {\"type\": \"boolean\"}]}}, \"type\": \"object\"}",
        "a ::= string | number\n"
        "a-kv ::= \"\\\"a\\\"\" space \":\" space a\n"
        "a-rest ::= ( \",\" space b-kv )?\n"
        "b ::= b-0 | boolean\n"
        "b-0 ::= string\n"
        "b-kv ::= \"\\\"b\\\"\" space \":\" space b\n"
        "boolean ::= (\"true\" | \"false\") space\n"
        "char ::= [^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})\n"
        "decimal-part ::= [0-9]{1,16}\n"
        "integral-part ::= [0] | [1-9] [0-9]{0,15}\n"
        "number ::= (\"-\"? integral-part) (\".\" decimal-part)? ([eE] [-+]? integral-part)? space\n"
        "root ::= \"{\" space  (a-kv a-rest | b-kv )? \"}\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n"
        "string ::= \"\\\"\" char* \"\\\"\" space\n" },
    { true, "mix of allOf, anyOf and $ref",
        "{\"allOf\": [{\"$ref\": \"#/definitions/foo\"}, {\"$ref\": \"#/definitions/bar\"}, {\"anyOf\": [{\"$ref\": \"#/definitions/baz\"}, {\"$ref\": \"#/definitions/bam\"}]}], \"definitions\": {\"foo\": {\"properties\": {\"a\": {\"type\": \"number\"}}}, \"bar\": {\"properties\": {\"b\": {\"type\": \"number\"}}}, \"bam\": {\"properties\": {\"c\": {\"type\": \"number\"}}}, \"baz\": {\"properties\": {\"d\": {\"type\": \"number\"}}}}, \"type\": \"object\"}",
        "a-kv ::= \"\\\"a\\\"\" space \":\" space number\n"
        "b-kv ::= \"\\\"b\\\"\" space \":\" space number\n"
        "c-kv ::= \"\\\"c\\\"\" space \":\" space number\n"
        "d-kv ::= \"\\\"d\\\"\" space \":\" space number\n"
        "d-rest ::= ( \",\" space c-kv )?\n"
        "decimal-part ::= [0-9]{1,16}\n"
        "integral-part ::= [0] | [1-9] [0-9]{0,15}\n"
        "number ::= (\"-\"? integral-part) (\".\" decimal-part)? ([eE] [-+]? integral-part)? space\n"
        "root ::= \"{\" space a-kv \",\" space b-kv ( \",\" space ( d-kv d-rest | c-kv ) )? \"}\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "allOf with enum schema",
        "{\"allOf\": [{\"$ref\": \"#/definitions/foo\"}], \"definitions\": {\"foo\": {\"type\": \"string\", \"enum\": [\"a\", \"b\"]}}}",
        "root ::= (\"\\\"a\\\"\" | \"\\\"b\\\"\") space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "allOf with multiple enum schemas",
        "{\"allOf\": [{\"$ref\": \"#/definitions/foo\"}, {\"$ref\": \"#/definitions/bar\"}], \"definitions\": {\"foo\": {\"type\": \"string\", \"enum\": [\"a\", \"b\", \"c\"]}, \"bar\": {\"type\": \"string\", \"enum\": [\"b\", \"c\", \"d\"]}}}",
        "root ::= (\"\\\"b\\\"\" | \"\\\"c\\\"\") space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "conflicting names",
        "{\"type\": \"object\", \"properties\": {\"number\": {\"type\": \"object\", \"properties\": {\"number\": {\"type\": \"object\", \"properties\": {\"root\": {\"type\": \"number\"}}, \"required\": [\"root\"], \"additionalProperties\": false}}, \"required\": [\"number\"], \"additionalProperties\": false}}, \"required\": [\"number\"], \"additionalProperties\": false, \"definitions\": {}}",
        "decimal-part ::= [0-9]{1,16}\n"
        "integral-part ::= [0] | [1-9] [0-9]{0,15}\n"
        "number ::= (\"-\"? integral-part) (\".\" decimal-part)? ([eE] [-+]? integral-part)? space\n"
        "number- ::= \"{\" space number-number-kv \"}\" space\n"
        "number-kv ::= \"\\\"number\\\"\" space \":\" space number-\n"
        "number-number ::= \"{\" space number-number-root-kv \"}\" space\n"
        "number-number-kv ::= \"\\\"number\\\"\" space \":\" space number-number\n"
        "number-number-root-kv ::= \"\\\"root\\\"\" space \":\" space number\n"
        "root ::= \"{\" space number-kv \"}\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "description only (no type) treated as unconstrained",
        "{\"description\": \"The 0-based index of the last line to be retrieved (inclusive). If None, read until the end of the file.\"}",
        "array ::= \"[\" space ( value (\",\" space value)* )? \"]\" space\n"
        "boolean ::= (\"true\" | \"false\") space\n"
        "char ::= [^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})\n"
        "decimal-part ::= [0-9]{1,16}\n"
        "integral-part ::= [0] | [1-9] [0-9]{0,15}\n"
        "null ::= \"null\" space\n"
        "number ::= (\"-\"? integral-part) (\".\" decimal-part)? ([eE] [-+]? integral-part)? space\n"
        "object ::= \"{\" space ( string \":\" space value (\",\" space string \":\" space value)* )? \"}\" space\n"
        "root ::= value\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n"
        "string ::= \"\\\"\" char* \"\\\"\" space\n"
        "value ::= object | array | string | number | boolean | null\n" },
    { true, "literal string with escapes",
        "{\"properties\": {\"code\": {\"const\": \" \\r \\n \\\" \\\\ \", \"description\": \"Generated code\", \"title\": \"Code\", \"type\": \"string\"}}, \"required\": [\"code\"], \"title\": \"DecoderResponse\", \"type\": \"object\"}",
        "code ::= \"\\\" \\\\r \\\\n \\\\\\\" \\\\\\\\ \\\"\" space\n"
        "code-kv ::= \"\\\"code\\\"\" space \":\" space code\n"
        "root ::= \"{\" space code-kv \"}\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "regexp with non-capturing group",
        "{\"type\": \"string\", \"pattern\": \"^(?:foo|bar)baz$\"}",
        "root ::= \"\\\"\" ((\"foo\" | \"bar\") \"baz\") \"\\\"\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
    { true, "regexp with nested non-capturing groups",
        "{\"type\": \"string\", \"pattern\": \"^(?:(?:ab)+c)?d$\"}",
        "root ::= \"\\\"\" (((\"ab\")+ \"c\")? \"d\") \"\\\"\" space\n"
        "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" },
};

#define SPACE "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n"
#define CHAR  "char ::= [^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})\n"
#define INTEGER "integer ::= (\"-\"? integral-part) space\n"
#define INTEGRAL "integral-part ::= [0] | [1-9] [0-9]{0,15}\n"
#define STRING "string ::= \"\\\"\" char* \"\\\"\" space\n"

// what this port adds: \d \w \s, identity escapes, nested $defs, recursive refs, nlohmann's number text
static const struct jsg_case OWN_CASES[] = {
    { true, "pattern class escapes",
        "{\"type\": \"string\", \"pattern\": \"^\\\\d+-\\\\w{2}\\\\s?$\"}",
        "root ::= \"\\\"\" ([0-9]+ \"-\" root-1{2,2} [ \\t\\n\\r\\x0C\\x0B]?) \"\\\"\" space\n"
        "root-1 ::= [a-zA-Z0-9_]\n"
        SPACE },
    { true, "pattern class escape inside brackets",
        "{\"type\": \"string\", \"pattern\": \"^[\\\\d.]+$\"}",
        "root ::= \"\\\"\" ([0-9.]+) \"\\\"\" space\n"
        SPACE },
    { true, "pattern identity escapes and quantified escape",
        "{\"type\": \"string\", \"pattern\": \"^a\\\\/b\\\\.+$\"}",
        "root ::= \"\\\"\" (\"a/b\" \".\"+) \"\\\"\" space\n"
        SPACE },
    { true, "$ref into $defs",
        "{\"$ref\": \"#/$defs/foo\", \"$defs\": {\"foo\": {\"type\": \"string\"}}}",
        CHAR
        "root ::= string\n"
        SPACE
        STRING },
    { true, "nested $defs hoisted to the root",
        "{\"type\": \"object\", \"properties\": {\"a\": {\"$ref\": \"#/$defs/n\"},"
        " \"b\": {\"$defs\": {\"n\": {\"type\": \"integer\"}}, \"type\": \"string\"}}, \"required\": [\"a\", \"b\"]}",
        "a ::= integer\n"
        "a-kv ::= \"\\\"a\\\"\" space \":\" space a\n"
        "b-kv ::= \"\\\"b\\\"\" space \":\" space string\n"
        CHAR
        INTEGER
        INTEGRAL
        "root ::= \"{\" space a-kv \",\" space b-kv \"}\" space\n"
        SPACE
        STRING },
    { true, "recursive $ref",
        "{\"$ref\": \"#/definitions/node\", \"definitions\": {\"node\": {\"type\": \"object\","
        " \"properties\": {\"next\": {\"$ref\": \"#/definitions/node\"}}, \"additionalProperties\": false}}}",
        "ref-definitions-node ::= \"{\" space  (ref-definitions-node-next-kv )? \"}\" space\n"
        "ref-definitions-node-next ::= ref-definitions-node\n"
        "ref-definitions-node-next-kv ::= \"\\\"next\\\"\" space \":\" space ref-definitions-node-next\n"
        "root ::= ref-definitions-node\n"
        SPACE },
    { true, "real constants as nlohmann::json::dump writes them",
        "{\"enum\": [1.5, 0.1, 1e100, 2.0, -0.00001, 123456789012345678.0, \"a\\u0001\\t\\u00e9\"]}",
        "root ::= (\"1.5\" | \"0.1\" | \"1e+100\" | \"2.0\" | \"-1e-05\" | \"1.2345678901234568e+17\""
        " | \"\\\"a\\\\u0001\\\\t\xc3\xa9\\\"\") space\n"
        SPACE },
    { true, "exclusive bounds",
        "{\"type\": \"integer\", \"exclusiveMinimum\": 4, \"exclusiveMaximum\": 31}",
        "root ::= ([5-9] | ([1-2] [0-9] | [3] \"0\")) space\n"
        SPACE },
    { true, "uuid format named after the property",
        "{\"type\": \"object\", \"properties\": {\"id\": {\"type\": \"string\", \"format\": \"uuid4\"}}, \"required\": [\"id\"]}",
        "id-kv ::= \"\\\"id\\\"\" space \":\" space uuid4\n"
        "root ::= \"{\" space id-kv \"}\" space\n"
        SPACE
        "uuid4 ::= \"\\\"\" [0-9a-fA-F]{8} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{12} \"\\\"\" space\n" },
};

// schemas that must be refused with a message (never a crash, a hang or a grammar GBNF parsers reject)
static const char * const REFUSED[] = {
    "{\"type\": \"kaboom\"}",
    "{\"type\": 123}",
    "{\"type\": \"string\", \"pattern\": \"abc\"}",           // not anchored
    "{\"type\": \"string\", \"pattern\": \"^(ab$\"}",         // unbalanced (
    "{\"type\": \"string\", \"pattern\": \"^ab)c$\"}",        // unbalanced ) (llama.cpp drops the rest)
    "{\"type\": \"string\", \"pattern\": \"^a]b$\"}",         // stray ] (llama.cpp loops forever)
    "{\"type\": \"string\", \"pattern\": \"^a}b$\"}",         // stray }
    "{\"type\": \"string\", \"pattern\": \"^[ab$\"}",         // unbalanced [
    "{\"type\": \"string\", \"pattern\": \"^a{2$\"}",         // unbalanced {
    "{\"type\": \"string\", \"pattern\": \"^a{x}$\"}",        // bad count
    "{\"type\": \"string\", \"pattern\": \"^a{1,2,3}$\"}",    // too many counts
    "{\"type\": \"string\", \"pattern\": \"^*a$\"}",          // nothing to repeat
    "{\"type\": \"string\", \"pattern\": \"^a|+$\"}",         // nothing to repeat
    "{\"type\": \"string\", \"pattern\": \"^[]a$\"}",         // empty class (GBNF has none)
    "{\"type\": \"string\", \"pattern\": \"^[l-\\\\?]$\"}",       // reversed range to an escaped character
    "{\"type\": \"string\", \"pattern\": \"^[\u00e9-\u00e8]$\"}",    // reversed range of two-byte characters
    "{\"type\": \"string\", \"pattern\": \"^a{2001}$\"}",         // more repetitions than GBNF parsers unroll
    "{\"type\": \"string\", \"minLength\": 2001}",
    "{\"type\": \"array\", \"items\": {}, \"maxItems\": 5000}",
    "{\"type\": []}",                                     // an empty union matches nothing
    "{\"anyOf\": []}",
    "{\"oneOf\": []}",
    "{\"type\": \"string\", \"pattern\": \"^ab\\\\$\"}",        // "\\$": an escaped $, no anchor (a trailing backslash)
    "{\"type\": \"string\", \"pattern\": \"^\\\\ud+2$\"}",      // \u without its 4 hex digits
    "{\"type\": \"string\", \"pattern\": \"^[\\\\x4]$\"}",       // \x without its 2 hex digits
    "{\"type\": \"string\", \"pattern\": \"^[^]a$\"}",        // empty negated class
    "{\"type\": \"string\", \"pattern\": \"^[z-a]$\"}",       // reversed range
    "{\"type\": \"string\", \"pattern\": \"^a**$\"}",         // a quantifier after a quantifier (left recursion)
    "{\"type\": \"string\", \"pattern\": \"^a*+$\"}",
    "{\"type\": \"string\", \"pattern\": \"^a*{2,}$\"}",
    "{\"type\": \"string\", \"pattern\": \"^a\\\\\\\\**$\"}",  // regex a\\** : an escaped backslash, then two quantifiers
    "{\"type\": \"string\", \"pattern\": 5}",
    "{\"$ref\": \"https://example.com/schema.json#/definitions/a\"}",
    "{\"$ref\": \"other.json#/a\"}",
    "{\"$ref\": \"#/definitions/missing\", \"definitions\": {}}",
    "{\"$ref\": \"#/items/7\", \"items\": [{}]}",
    "{\"$ref\": 5}",
    "{\"type\": \"integer\", \"minimum\": 10, \"maximum\": 5}",
    "{\"type\": \"integer\", \"minimum\": \"zero\"}",
    "{\"type\": \"array\", \"items\": {}, \"minItems\": -1}",
    "{\"type\": \"string\", \"maxLength\": \"long\"}",
    "{\"format\": 5}",
    "{\"enum\": 5}",
    "{\"anyOf\": {\"type\": \"string\"}}",
    "{\"type\": \"object\", \"properties\": [1, 2]}",
    "{\"allOf\": 3}",
    "true",
    "\"string\"",
};

static void check_case(const struct jsg_case * tc) {
    char err[1024];
    char * g = json_schema_to_grammar_str(tc->schema, err, sizeof(err));
    if (tc->ok) {
        TH_CHECK(g != NULL, "%s: conversion failed: %s", tc->name, err);
        if (g) {
            TH_CHECK(strcmp(g, tc->expected) == 0, "%s:\n# EXPECTED:\n%s# ACTUAL:\n%s", tc->name, tc->expected, g);
            // as llama.cpp's "Check Expectations Validity": the grammar parses and has a root
            char perr[256] = "";
            struct llama_grammar * pg = llama_grammar_init_impl(NULL, g, "root", perr, sizeof(perr));
            TH_CHECK(pg != NULL, "%s: the grammar does not parse: %s", tc->name, perr);
            llama_grammar_free_impl(pg);
        }
    } else {
        TH_CHECK(g == NULL && strstr(err, "JSON schema conversion failed") != NULL,
                 "%s: expected a refusal, got %s", tc->name, g ? g : err);
    }
    free(g);
}

static void test_refused(void) {
    for (size_t i = 0; i < sizeof(REFUSED) / sizeof(REFUSED[0]); i++) {
        char err[1024] = "unset";
        char * g = json_schema_to_grammar_str(REFUSED[i], err, sizeof(err));
        TH_CHECK(g == NULL && strncmp(err, "JSON schema conversion failed:\n", 31) == 0 && strlen(err) > 31,
                 "schema %s: expected a refusal, got %s", REFUSED[i], g ? g : err);
        free(g);
    }
    // malformed JSON text
    char err[256] = "";
    char * g = json_schema_to_grammar_str("{\"type\": ", err, sizeof(err));
    TH_CHECK(g == NULL && strstr(err, "invalid JSON schema") != NULL, "bad JSON: %s", err);
    free(g);
    TH_CHECK(json_schema_to_grammar(NULL, err, sizeof(err)) == NULL, "NULL schema");
    // a small error buffer is cut, not overrun
    char tiny[8];
    memset(tiny, 'x', sizeof(tiny));
    g = json_schema_to_grammar_str("{\"type\": \"kaboom\"}", tiny, sizeof(tiny));
    TH_CHECK(g == NULL && strlen(tiny) == sizeof(tiny) - 1, "tiny error buffer");
    free(g);
}

// very deep nesting ends in a message, not a stack overflow
static void test_deep(void) {
    const int depth = 1000;
    size_t cap = (size_t) depth * 12 + 16, n = 0;
    char * s = malloc(cap);
    for (int i = 0; i < depth; i++) {
        n += (size_t) snprintf(s + n, cap - n, "{\"items\":");
    }
    n += (size_t) snprintf(s + n, cap - n, "{}");
    for (int i = 0; i < depth; i++) {
        s[n++] = '}';
    }
    s[n] = '\0';
    char err[256];
    char * g = json_schema_to_grammar_str(s, err, sizeof(err));
    TH_CHECK(g == NULL && strstr(err, "too deeply") != NULL, "deep schema: %s", g ? "converted" : err);
    free(g);
    free(s);

    // a $ref cycle without structure converts (the grammar engine refuses the left recursion), no loop
    g = json_schema_to_grammar_str("{\"$ref\": \"#/definitions/a\", \"definitions\": {\"a\": {\"$ref\": \"#/definitions/a\"}}}",
                                   err, sizeof(err));
    TH_CHECK(g != NULL, "ref cycle: %s", err);
    free(g);
    g = json_schema_to_grammar_str("{\"allOf\": [{\"$ref\": \"#/definitions/a\"}], \"definitions\": {\"a\": {\"allOf\": [{\"$ref\": \"#/definitions/a\"}]}}}",
                                   err, sizeof(err));
    free(g); // converts or refuses; must only terminate
    TH_CHECK(true, "allOf ref cycle terminates");
}

// the input schema is left as it was (conversion works on a copy: $defs hoisting edits it)
static void test_input_untouched(void) {
    const char * text = "{\"properties\": {\"a\": {\"$defs\": {\"x\": {\"type\": \"string\"}}, \"$ref\": \"#/$defs/x\"}}}";
    json_t * schema = json_loads(text, 0, NULL);
    char * before = json_dumps(schema, JSON_COMPACT | JSON_SORT_KEYS);
    char err[256];
    char * g = json_schema_to_grammar(schema, err, sizeof(err));
    char * after = json_dumps(schema, JSON_COMPACT | JSON_SORT_KEYS);
    TH_CHECK(g != NULL, "nested $defs beside $ref: %s", err);
    TH_CHECK(before && after && strcmp(before, after) == 0, "schema modified: %s -> %s", before, after);
    free(g);
    free(before);
    free(after);
    json_decref(schema);

    char * lit = gbnf_format_literal("a\"b\\c\nd");
    TH_CHECK(lit && strcmp(lit, "\"a\\\"b\\\\c\\nd\"") == 0, "gbnf_format_literal: %s", lit);
    free(lit);
}

int main(void) {
    for (size_t i = 0; i < sizeof(LLAMA_CPP_CASES) / sizeof(LLAMA_CPP_CASES[0]); i++) {
        check_case(&LLAMA_CPP_CASES[i]);
    }
    for (size_t i = 0; i < sizeof(OWN_CASES) / sizeof(OWN_CASES[0]); i++) {
        check_case(&OWN_CASES[i]);
    }
    test_refused();
    test_deep();
    test_input_untouched();
    return th_finish();
}

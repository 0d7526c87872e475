// Integer ranges of the JSON schema -> GBNF converter (see json-schema-to-grammar-impl.h): minimum / maximum /
// exclusiveMinimum / exclusiveMaximum of an integer schema become alternatives over decimal digit strings, as
// llama.cpp's _build_min_max_int writes them.
#include "json-schema-to-grammar-impl.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void digit_range(struct common_sb * out, char from, char to) {
    common_sb_addc(out, '[');
    common_sb_addc(out, from);
    if (from != to) {
        common_sb_addc(out, '-');
        common_sb_addc(out, to);
    }
    common_sb_addc(out, ']');
}

static void more_digits(struct common_sb * out, int min_digits, int max_digits) {
    common_sb_add(out, "[0-9]");
    if (min_digits == max_digits && min_digits == 1) {
        return;
    }
    common_sb_addf(out, "{%d", min_digits);
    if (max_digits != min_digits) {
        common_sb_addc(out, ',');
        if (max_digits != INT_MAX) {
            common_sb_addf(out, "%d", max_digits);
        }
    }
    common_sb_addc(out, '}');
}

static bool all_char(const char * s, size_t n, char ch) {
    for (size_t i = 0; i < n; i++) {
        if (s[i] != ch) {
            return false;
        }
    }
    return true;
}

// the decimal numbers from..to, both of the same length n
static void uniform_range(struct common_sb * out, const char * from, const char * to, size_t n) {
    size_t i = 0;
    while (i < n && from[i] == to[i]) {
        i++;
    }
    if (i > 0) {
        common_sb_addc(out, '"');
        common_sb_addn(out, from, i);
        common_sb_addc(out, '"');
    }
    if (i >= n) {
        return;
    }
    if (i > 0) {
        common_sb_addc(out, ' ');
    }
    const size_t sub_len = n - i - 1;
    if (sub_len == 0) {
        common_sb_addc(out, '[');
        common_sb_addc(out, from[i]);
        common_sb_addc(out, '-');
        common_sb_addc(out, to[i]);
        common_sb_addc(out, ']');
        return;
    }
    const char * from_sub = from + i + 1;
    const char * to_sub   = to + i + 1;
    char zeros[24], nines[24];
    memset(zeros, '0', sub_len);
    memset(nines, '9', sub_len);
    zeros[sub_len] = nines[sub_len] = '\0';
    bool to_reached = false;
    common_sb_addc(out, '(');
    if (all_char(from_sub, sub_len, '0')) {
        digit_range(out, from[i], (char) (to[i] - 1));
        common_sb_addc(out, ' ');
        more_digits(out, (int) sub_len, (int) sub_len);
    } else {
        common_sb_addc(out, '[');
        common_sb_addc(out, from[i]);
        common_sb_add(out, "] (");
        uniform_range(out, from_sub, nines, sub_len);
        common_sb_addc(out, ')');
        if (from[i] < to[i] - 1) {
            common_sb_add(out, " | ");
            if (all_char(to_sub, sub_len, '9')) {
                digit_range(out, (char) (from[i] + 1), to[i]);
                to_reached = true;
            } else {
                digit_range(out, (char) (from[i] + 1), (char) (to[i] - 1));
            }
            common_sb_addc(out, ' ');
            more_digits(out, (int) sub_len, (int) sub_len);
        }
    }
    if (!to_reached) {
        common_sb_add(out, " | ");
        digit_range(out, to[i], to[i]);
        common_sb_addc(out, ' ');
        uniform_range(out, zeros, to_sub, sub_len);
    }
    common_sb_addc(out, ')');
}

// alternatives matching the decimal integers in [min_value, max_value]; INT64_MIN / INT64_MAX = unbounded.
// The caller guarantees min <= max and that neither bound is the other extreme (negations stay in range).
static void build_min_max_int(struct common_sb * out, int64_t min_value, int64_t max_value, int decimals_left,
                              bool top_level) {
    const bool has_min = min_value != INT64_MIN;
    const bool has_max = max_value != INT64_MAX;

    if (has_min && has_max) {
        if (min_value < 0 && max_value < 0) {
            common_sb_add(out, "\"-\" (");
            build_min_max_int(out, -max_value, -min_value, decimals_left, true);
            common_sb_addc(out, ')');
            return;
        }
        if (min_value < 0) {
            common_sb_add(out, "\"-\" (");
            build_min_max_int(out, 0, -min_value, decimals_left, true);
            common_sb_add(out, ") | ");
            min_value = 0;
        }
        char min_s[24], max_s[24];
        snprintf(min_s, sizeof(min_s), "%" PRId64, min_value);
        snprintf(max_s, sizeof(max_s), "%" PRId64, max_value);
        const size_t min_digits = strlen(min_s);
        const size_t max_digits = strlen(max_s);
        for (size_t digits = min_digits; digits < max_digits; digits++) {
            char nines[24];
            memset(nines, '9', digits);
            nines[digits] = '\0';
            uniform_range(out, min_s, nines, digits);
            min_s[0] = '1';
            memset(min_s + 1, '0', digits);
            min_s[digits + 1] = '\0';
            common_sb_add(out, " | ");
        }
        uniform_range(out, min_s, max_s, max_digits);
        return;
    }

    const int less_decimals = decimals_left - 1 > 1 ? decimals_left - 1 : 1;

    if (has_min) {
        if (min_value < 0) {
            common_sb_add(out, "\"-\" (");
            build_min_max_int(out, INT64_MIN, -min_value, decimals_left, false);
            common_sb_add(out, ") | [0] | [1-9] ");
            more_digits(out, 0, decimals_left - 1);
        } else if (min_value == 0) {
            if (top_level) {
                common_sb_add(out, "[0] | [1-9] ");
                more_digits(out, 0, less_decimals);
            } else {
                more_digits(out, 1, decimals_left);
            }
        } else if (min_value <= 9) {
            const char ch = (char) ('0' + min_value);
            const char range_start = top_level ? '1' : '0';
            if (ch > range_start) {
                digit_range(out, range_start, (char) (ch - 1));
                common_sb_addc(out, ' ');
                more_digits(out, 1, less_decimals);
                common_sb_add(out, " | ");
            }
            digit_range(out, ch, '9');
            common_sb_addc(out, ' ');
            more_digits(out, 0, less_decimals);
        } else {
            char min_s[24];
            snprintf(min_s, sizeof(min_s), "%" PRId64, min_value);
            const int len = (int) strlen(min_s);
            const char ch = min_s[0];
            if (ch > '1') {
                digit_range(out, top_level ? '1' : '0', (char) (ch - 1));
                common_sb_addc(out, ' ');
                more_digits(out, len, less_decimals);
                common_sb_add(out, " | ");
            }
            digit_range(out, ch, ch);
            common_sb_add(out, " (");
            build_min_max_int(out, strtoll(min_s + 1, NULL, 10), INT64_MAX, less_decimals, false);
            common_sb_addc(out, ')');
            if (ch < '9') {
                common_sb_add(out, " | ");
                digit_range(out, (char) (ch + 1), '9');
                common_sb_addc(out, ' ');
                more_digits(out, len - 1, less_decimals);
            }
        }
        return;
    }

    if (has_max) {
        if (max_value >= 0) {
            if (top_level) {
                common_sb_add(out, "\"-\" [1-9] ");
                more_digits(out, 0, less_decimals);
                common_sb_add(out, " | ");
            }
            build_min_max_int(out, 0, max_value, decimals_left, true);
        } else {
            common_sb_add(out, "\"-\" (");
            build_min_max_int(out, -max_value, INT64_MAX, decimals_left, false);
            common_sb_addc(out, ')');
        }
    }
}

//
// the schema's bounds -> the rule
//

// an integer bound; the extremes of int64 are refused (INT64_MIN / INT64_MAX mean "unbounded" below)
static bool read_bound(struct jsg * c, const json_t * schema, const char * key, int64_t * out) {
    const json_t * v = jsg_get(schema, key);
    if (json_is_integer(v)) {
        *out = (int64_t) json_integer_value(v);
    } else if (json_is_real(v) && fabs(json_real_value(v)) < 9.2e18) {
        *out = (int64_t) json_real_value(v);
    } else {
        jsg_add_error(c, "\"%s\" must be an integer", key);
        return false;
    }
    if (*out == INT64_MIN || *out == INT64_MAX) {
        jsg_add_error(c, "\"%s\" is out of range", key);
        return false;
    }
    return true;
}

const char * jsg_visit_integer_range(struct jsg * c, const json_t * schema, const char * rule_name) {
    int64_t min_value = INT64_MIN, max_value = INT64_MAX, v;
    if (jsg_get(schema, "minimum")) {
        if (!read_bound(c, schema, "minimum", &min_value)) {
            return "";
        }
    } else if (jsg_get(schema, "exclusiveMinimum")) {
        if (!read_bound(c, schema, "exclusiveMinimum", &v)) {
            return "";
        }
        min_value = v + 1; // read_bound refused INT64_MAX
    }
    if (jsg_get(schema, "maximum")) {
        if (!read_bound(c, schema, "maximum", &max_value)) {
            return "";
        }
    } else if (jsg_get(schema, "exclusiveMaximum")) {
        if (!read_bound(c, schema, "exclusiveMaximum", &v)) {
            return "";
        }
        if (v == INT64_MIN + 1) {
            jsg_add_error(c, "\"exclusiveMaximum\" is out of range");
            return "";
        }
        max_value = v - 1;
    }
    if (min_value > max_value) {
        // llama.cpp writes a reversed range no text matches; refused
        jsg_add_error(c, "integer range is empty (minimum > maximum)");
        return "";
    }
    struct common_sb out = { 0 };
    common_sb_addc(&out, '(');
    build_min_max_int(&out, min_value, max_value, 16, true);
    common_sb_add(&out, ") space");
    return jsg_add_rule(c, rule_name, jsg_sb_own(c, &out));
}

// $ref and $defs of the JSON schema -> GBNF converter (see json-schema-to-grammar-impl.h): nested $defs hoisted
// to the root as llama.cpp does, every local $ref ("#/...") resolved up front to its target in the converter's copy
// of the schema, and a $ref's rule ("ref-...") built on first use, recursion allowed.
#include "json-schema-to-grammar-impl.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

// the target resolved for ref by jsg_resolve_refs; NULL when unresolved
const json_t * jsg_ref_target(const struct jsg * c, const char * ref) {
    for (size_t i = 0; i < c->n_refs; i++) {
        if (strcmp(c->refs[i].ref, ref) == 0) {
            return c->refs[i].target;
        }
    }
    return NULL;
}

// every $ref of the schema, resolved against the (hoisted) root: only local JSON pointers "#/..."
void jsg_resolve_refs(struct jsg * c, const json_t * root, const json_t * n, int depth) {
    if (depth > JSG_MAX_DEPTH) {
        jsg_add_error(c, "schema nested too deeply");
        return;
    }
    if (json_is_array(n)) {
        size_t i;
        const json_t * el;
        json_array_foreach(n, i, el) {
            jsg_resolve_refs(c, root, el, depth + 1);
        }
        return;
    }
    if (!json_is_object(n)) {
        return;
    }
    const json_t * refj = json_object_get(n, "$ref");
    if (!refj) {
        const char * k;
        const json_t * el;
        json_object_foreach((json_t *) n, k, el) {
            jsg_resolve_refs(c, root, el, depth + 1);
        }
        return;
    }
    if (!json_is_string(refj)) {
        jsg_add_error(c, "\"$ref\" must be a string");
        return;
    }
    const char * ref = json_string_value(refj);
    if (jsg_ref_target(c, ref)) {
        return;
    }
    if (strncmp(ref, "https://", 8) == 0) {
        // llama.cpp's converter fetches nothing either (its fetcher returns null); say so instead
        jsg_add_error(c, "Unsupported ref: %s (remote schemas are not fetched)", ref);
        return;
    }
    if (strncmp(ref, "#/", 2) != 0) {
        jsg_add_error(c, "Unsupported ref: %s", ref);
        return;
    }
    const json_t * target = root;
    const char * p = ref + 2; // JSON pointer tokens after "#/", split on '/' (no ~0 / ~1 unescaping, as llama.cpp)
    for (;;) {
        const char * slash = strchr(p, '/');
        const size_t len = slash ? (size_t) (slash - p) : strlen(p);
        char sel[256];
        if (len >= sizeof(sel)) {
            jsg_add_error(c, "Error resolving ref %s: path element too long", ref);
            return;
        }
        memcpy(sel, p, len);
        sel[len] = '\0';
        if (json_is_object(target) && json_object_get(target, sel)) {
            target = json_object_get(target, sel);
        } else if (json_is_array(target)) {
            char * end = NULL;
            const unsigned long long idx = (sel[0] >= '0' && sel[0] <= '9') ? strtoull(sel, &end, 10) : ULLONG_MAX;
            if (idx >= json_array_size(target)) {
                jsg_add_error(c, "Error resolving ref %s: %s not in %s", ref, sel, jsg_dump_short(c, target));
                return;
            }
            target = json_array_get(target, (size_t) idx);
        } else {
            jsg_add_error(c, "Error resolving ref %s: %s not in %s", ref, sel, jsg_dump_short(c, target));
            return;
        }
        if (!slash) {
            break;
        }
        p = slash + 1;
    }
    if (!jsg_grow(c, (void **) &c->refs, &c->cap_refs, c->n_refs, sizeof(*c->refs))) {
        return;
    }
    c->refs[c->n_refs].ref = JSG_CAT(c, ref);
    c->refs[c->n_refs].target = target;
    c->n_refs++;
}

static bool is_resolving(const struct jsg * c, const char * ref) {
    for (size_t i = 0; i < c->n_resolving; i++) {
        if (strcmp(c->resolving[i], ref) == 0) {
            return true;
        }
    }
    return false;
}

const char * jsg_resolve_ref(struct jsg * c, const char * ref) {
    const char * hash = strchr(ref, '#');
    const char * fragment = hash ? hash + 1 : ref;
    const char * ref_name = JSG_CAT(c, "ref", jsg_sanitize_name(c, fragment));
    if (!jsg_find_rule(c, ref_name) && !is_resolving(c, ref)) {
        const json_t * target = jsg_ref_target(c, ref);
        if (!target) {
            jsg_add_error(c, "Unresolved ref: %s", ref);
            return "";
        }
        if (!jsg_grow(c, (void **) &c->resolving, &c->cap_resolving, c->n_resolving, sizeof(*c->resolving))) {
            return "";
        }
        c->resolving[c->n_resolving++] = ref;
        ref_name = jsg_visit(c, target, ref_name);
        c->n_resolving--;
    }
    return ref_name;
}

// nested "$defs" are moved to the root's "$defs" (first definition of a name wins), as llama.cpp does for
// schemas whose $refs point at #/$defs/... while the definitions sit deeper
static void collect_defs(json_t * node, json_t * collected, int depth) {
    if (!json_is_object(node) || depth > JSG_MAX_DEPTH) {
        return;
    }
    json_t * defs = json_object_get(node, "$defs");
    if (json_is_object(defs)) {
        const char * k;
        json_t * v;
        json_object_foreach(defs, k, v) {
            if (!json_object_get(collected, k)) {
                json_object_set(collected, k, v);
            }
        }
        json_object_del(node, "$defs");
    }
    const char * k;
    json_t * v;
    json_object_foreach(node, k, v) {
        if (json_is_object(v)) {
            collect_defs(v, collected, depth + 1);
        } else if (json_is_array(v)) {
            size_t i;
            json_t * el;
            json_array_foreach(v, i, el) {
                if (json_is_object(el)) {
                    collect_defs(el, collected, depth + 1);
                }
            }
        }
    }
}

bool jsg_hoist_defs_to_root(json_t * schema) {
    if (!json_is_object(schema)) {
        return true;
    }
    json_t * collected = json_object();
    if (!collected) {
        return false;
    }
    collect_defs(schema, collected, 0);
    bool ok = true;
    if (json_object_size(collected) > 0) {
        json_t * root_defs = json_object_get(schema, "$defs");
        if (!root_defs) {
            root_defs = json_object();
            ok = root_defs && json_object_set_new(schema, "$defs", root_defs) == 0;
        }
        const char * k;
        json_t * v;
        json_object_foreach(collected, k, v) {
            if (ok && json_is_object(root_defs) && !json_object_get(root_defs, k)) {
                ok = json_object_set(root_defs, k, v) == 0;
            }
        }
    }
    json_decref(collected);
    return ok;
}

"""Tracing wrappers for the generated exports (shim/core/trace.h).

Every export becomes a thin wrapper around an inline body: with tracing and statistics off it
costs one well-predicted branch (trace::active(), a relaxed load); with either on, a Span records
the call with a short argument summary generated here from the declaration (sizes, pointers,
streams, enum names), and the forwarded backend call is nested in it as a BackendSpan.
"""
import re

MAX_ARGS = 6  # the summary's first arguments: enough to tell calls apart, cheap to write


def enum_label_function(ci, t, emitted, out):
    """Emits (once) a label function for enum type t; returns its name or None."""
    decl = t.get_canonical().get_declaration()
    key = t.get_canonical().spelling
    fname = "trace_label_" + re.sub(r"\W", "_", key)
    if key in emitted:
        return fname
    seen, cases = set(), []
    for e in decl.get_children():
        if e.kind == ci.CursorKind.ENUM_CONSTANT_DECL and e.enum_value not in seen:
            seen.add(e.enum_value)
            cases.append(f'    case {e.enum_value}: return "{e.spelling}";')
    if not cases:
        return None
    emitted.add(key)
    out.append(f"[[maybe_unused]] static const char* {fname}(long long v) {{\n  switch (v) {{\n"
               + "\n".join(cases) + "\n  }\n  return nullptr;\n}")
    return fname


def arg_summary(ci, decl, emitted, labels_out):
    """Statements writing the argument summary into `span.args()`."""
    lines = []
    for p in decl.params[:MAX_ARGS]:
        t = p.type.get_canonical()
        k = t.kind
        if k == ci.TypeKind.POINTER:
            lines.append(f'  span.args().ptr("{p.name}", reinterpret_cast<const void*>({p.name}));')
        elif k == ci.TypeKind.ENUM:
            fn = enum_label_function(ci, t, emitted, labels_out)
            label = f"{fn}(static_cast<long long>({p.name}))" if fn else "nullptr"
            lines.append(f'  span.args().enum_value("{p.name}", static_cast<int>({p.name}), {label});')
        elif k in (ci.TypeKind.UINT, ci.TypeKind.ULONG, ci.TypeKind.ULONGLONG, ci.TypeKind.USHORT,
                   ci.TypeKind.UCHAR):
            lines.append(f'  span.args().u64("{p.name}", static_cast<unsigned long long>({p.name}));')
        elif k in (ci.TypeKind.INT, ci.TypeKind.LONG, ci.TypeKind.LONGLONG, ci.TypeKind.SHORT,
                   ci.TypeKind.CHAR_S, ci.TypeKind.SCHAR, ci.TypeKind.BOOL):
            lines.append(f'  span.args().i64("{p.name}", static_cast<long long>({p.name}));')
    return lines


def wrap(ci, decl, sym, name, result_spelling, params_text, args_text, body_lines, emitted,
         labels_out, status_types, attrs="extern \"C\" TORCHADA_EXPORT", ready=None, gate=None,
         first=None):
    """The export `sym` as a wrapper over `torchada_body_<name><kTraced>` (body_lines may use
    kTraced). A result of one of `status_types` is the call's status in the statistics.

    The traced path (tracing or statistics on, or not decided yet) is a separate cold function the
    export tail-calls: the export itself keeps no Span on its frame and nothing alive across a call
    before the backend's, so its own path is the check, the body and the backend call.

    `ready`, when given, is an expression true when the body may skip its backend's loading and
    pass-through checks: the body is then `torchada_body_<name><kTraced, kReady>`, the export
    runs it with kReady after checking `ready`, and takes the cold path otherwise (which runs it
    without, loading the backend or passing the call on): the export's own path then has no call
    but the backend's, so it saves and restores nothing.

    `gate`, when given instead, is an expression for a pointer that is null unless the body may
    skip those checks and tracing is off (ta::fast_runtime()): the export's whole path is one load,
    one test and the body, which receives the pointer as its first parameter `fast` (null on the
    cold path) and takes kReady.

    `first`, when given, is a statement every call makes before anything else: at the export's
    entry, or with a `gate` (which must stay null until the statement has had its effect) at the
    entry of the cold path."""
    is_void = result_spelling == "void"
    integral = result_spelling in status_types
    ret = "" if is_void else "return "
    staged = ready or gate
    tparams = "bool kTraced, bool kReady" if staged else "bool kTraced"
    plain, traced, fast = (("<false, false>", "<true, false>", "<false, true>") if staged else
                           ("<false>", "<true>", "<false>"))
    body_params = params_text
    body_args = fast_args = args_text
    if gate:  # the body gets the gate's pointer first: null on the cold path
        body_params = "const ta::Runtime* fast" + (", " + params_text if params_text else "")
        body_args = "nullptr" + (", " + args_text if args_text else "")
        fast_args = "fast" + (", " + args_text if args_text else "")
    out = [f"namespace {{\ntemplate <{tparams}>\n[[gnu::always_inline]] inline {result_spelling} "
           f"torchada_body_{name}({body_params}) {{"]
    out += body_lines
    out.append("}")
    call = f"torchada_body_{name}{traced}({body_args})"
    out.append(f"[[gnu::noinline, gnu::cold]] {result_spelling} torchada_traced_{name}({params_text}) {{")
    if first and gate:
        out.append(f"  {first}")
    cond = ("!ta::trace::active() || !ta::trace::enabled_slow()" if staged
            else "!ta::trace::enabled_slow()")
    if is_void:
        out.append(f"  if ({cond}) {{\n    torchada_body_{name}{plain}({body_args});\n"
                   f"    return;\n  }}")
    else:
        out.append(f"  if ({cond}) return torchada_body_{name}{plain}({body_args});")
    out.append(f"  ta::trace::Span span(Fn::k_{name});")
    out += arg_summary(ci, decl, emitted, labels_out)
    if is_void:
        out.append(f"  {call};\n  span.finish(0);")
    elif integral:
        out.append(f"  const {result_spelling} r = {call};\n"
                   f"  span.finish(static_cast<int>(r));\n  return r;")
    else:
        out.append(f"  auto r = {call};\n  span.finish(0);\n  return r;")
    out.append("}\n}  // namespace")
    out.append(f"{attrs} {result_spelling} {sym}({params_text}) {{")
    if first and not gate:
        out.append(f"  {first}")
    if gate:
        out.append(f"  const ta::Runtime* fast = {gate};")
    check = ("fast == nullptr" if gate else
             f"ta::trace::active() || !{ready}" if ready else "ta::trace::active()")
    if is_void:
        out.append(f"  if (TORCHADA_UNLIKELY({check})) {{\n    torchada_traced_{name}({args_text});\n"
                   f"    return;\n  }}")
    else:
        out.append(f"  if (TORCHADA_UNLIKELY({check})) return torchada_traced_{name}({args_text});")
    out.append(f"  {ret}torchada_body_{name}{fast}({fast_args});")
    out.append("}")
    return out

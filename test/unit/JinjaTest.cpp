//===- JinjaTest.cpp - the chat-template Jinja interpreter ----------------===//
//
// Each construct of runtime/serving/chat against what Jinja2 (as transformers
// configures it: trim_blocks, lstrip_blocks, its tojson, raise_exception,
// namespace) renders for the same template; the expected strings are
// Jinja2 3.1's output. And each error sentence.
//
//===----------------------------------------------------------------------===//
#include "core/Json.h"
#include "runtime/serving/chat/JinjaJson.h"
#include "runtime/serving/chat/JinjaTemplate.h"

#include <gtest/gtest.h>

using namespace accel::rt;
using namespace accel::rt::jinja;

namespace {

/// Renders `src` with the variables of the JSON object `vars`; "ERROR: msg"
/// on failure.
std::string render(const std::string &src, const std::string &vars = "{}") {
  StatusOr<Template> t = Template::parse(src, "t.jinja");
  if (!t)
    return "ERROR: " + t.status().message();
  StatusOr<json::Value> v = json::parse(vars);
  EXPECT_TRUE(v.isOk()) << vars;
  Dict d;
  for (const json::Member &m : v->members())
    d.emplace_back(m.first, fromJson(m.second));
  StatusOr<std::string> out = t->render(d);
  return out ? *out : "ERROR: " + out.status().message();
}

TEST(Jinja, TextAndOutput) {
  EXPECT_EQ(render("Hello {{ name }}!", R"({"name": "W"})"), "Hello W!");
  EXPECT_EQ(render("{{ 1 }} {{ 1.5 }} {{ none }} {{ true }} {{ [1, 'a'] }} {{ {'k': None} }}"),
            "1 1.5 None True [1, 'a'] {'k': None}");
  EXPECT_EQ(render("[{{ missing }}]"), "[]");
  EXPECT_EQ(render("{{ 'it''s' }} {{ \"a\\tb\\u00e9\" }}"), "its a\tbé");
  EXPECT_EQ(render("{{ 1e-05 }} {{ 1e16 }} {{ 0.1 + 0.2 }} {{ 3.0 }}"),
            "1e-05 1e+16 0.30000000000000004 3.0");
  // keep_trailing_newline is off: one newline ending the template goes.
  EXPECT_EQ(render("a\n\n"), "a\n");
}

TEST(Jinja, Comments) { EXPECT_EQ(render("a{# note #}b{#- x -#} c"), "abc"); }

TEST(Jinja, WhitespaceControl) {
  // trim_blocks: the newline after %} goes; lstrip_blocks: indentation before {% goes.
  EXPECT_EQ(render("{% if true %}\n  x\n  {% endif %}\ny"), "  x\ny");
  EXPECT_EQ(render("a  {%- if true -%}  b  {%- endif -%}  c"), "abc");
  EXPECT_EQ(render("a {{- 'b' -}} c"), "abc");
  EXPECT_EQ(render("  {%+ if true %}x{% endif %}"), "  x");
  // {{ }} is not lstripped, and the newline after }} stays.
  EXPECT_EQ(render("  {{ 'x' }}\ny"), "  x\ny");
  EXPECT_EQ(render("{# c #}\nx"), "x");
}

TEST(Jinja, IfElifElse) {
  const char *t = "{% if n == 1 %}one{% elif n == 2 %}two{% else %}many{% endif %}";
  EXPECT_EQ(render(t, R"({"n": 1})"), "one");
  EXPECT_EQ(render(t, R"({"n": 2})"), "two");
  EXPECT_EQ(render(t, R"({"n": 7})"), "many");
  EXPECT_EQ(render("{{ 'y' if x else 'n' }}{{ 'z' if false }}", R"({"x": [0]})"), "y");
}

TEST(Jinja, ForLoop) {
  EXPECT_EQ(render("{% for x in xs %}{{ loop.index0 }}{{ loop.index }}{{ x }}"
                   "{{ '|' if not loop.last }}{% endfor %}",
                   R"({"xs": ["a", "b"]})"),
            "01a|12b");
  EXPECT_EQ(render("{% for x in xs %}{{ loop.first }}{{ loop.length }}{{ loop.revindex }} "
                   "{% endfor %}",
                   R"({"xs": [1, 2]})"),
            "True22 False21 ");
  EXPECT_EQ(render("{% for x in xs if x > 1 %}{{ x }}{{ loop.length }}{% else %}none{% endfor %}",
                   R"({"xs": [1, 2, 3]})"),
            "2232");
  EXPECT_EQ(render("{% for x in [] %}x{% else %}empty{% endfor %}"), "empty");
  EXPECT_EQ(render("{% for k, v in d | items %}{{ k }}={{ v }};{% endfor %}",
                   R"({"d": {"a": 1, "b": [2]}})"),
            "a=1;b=[2];");
  EXPECT_EQ(render("{% for k in d %}{{ k }}{% endfor %}", R"({"d": {"x": 1, "y": 2}})"), "xy");
  EXPECT_EQ(render("{% for x in range(5) %}{% if x == 1 %}{% continue %}{% endif %}"
                   "{% if x == 3 %}{% break %}{% endif %}{{ x }}{% endfor %}"),
            "02");
  // A set inside a loop does not leak out; a namespace carries it.
  EXPECT_EQ(render("{% set n = 0 %}{% for x in [1, 2] %}{% set n = n + x %}{% endfor %}{{ n }}"),
            "0");
  // ... nor into the next iteration.
  EXPECT_EQ(render("{% set n = 0 %}{% for x in [1, 2] %}{{ n }}{% set n = n + x %}{% endfor %}"),
            "00");
  EXPECT_EQ(render("{% for x in [1, 2] %}{% if x == 2 %}[{{ y }}]{% endif %}{% set y = x %}"
                   "{% endfor %}"),
            "[]");
  EXPECT_EQ(render("{% set ns = namespace(n=0) %}{% for x in [1, 2] %}{% set ns.n = ns.n + x %}"
                   "{% endfor %}{{ ns.n }}"),
            "3");
}

TEST(Jinja, SetAndMacro) {
  EXPECT_EQ(render("{% set a, b = [1, 2] %}{{ b }}{{ a }}"), "21");
  EXPECT_EQ(render("{% set x %}in {{ 1 + 1 }}{% endset %}[{{ x }}]"), "[in 2]");
  EXPECT_EQ(render("{% macro m(a, b='d') %}<{{ a }}{{ b }}>{% endmacro %}{{ m(1) }}{{ m(2, b='x') }}"),
            "<1d><2x>");
  EXPECT_EQ(render("{% set ns = namespace() %}{% set ns.k = 'v' %}{{ ns.k }}"), "v");
}

TEST(Jinja, Operators) {
  EXPECT_EQ(render("{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 7 / 2 }} {{ 2 ** 10 }}"),
            "3 -4 1 2 3.5 1024");
  EXPECT_EQ(render("{{ 'a' + 'b' }} {{ 'a' ~ 1 ~ none }} {{ [1] + [2] }} {{ 'ab' * 2 }}"),
            "ab a1None [1, 2] abab");
  EXPECT_EQ(render("{{ 1 == 1.0 }} {{ true == 1 }} {{ 'a' in 'cat' }} {{ 2 not in [1] }} "
                   "{{ 'k' in {'k': 1} }} {{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }}"),
            "True True True True True True False");
  EXPECT_EQ(render("{{ not 0 and 'x' or 'y' }} {{ 0 or '' or 'z' }} {{ none is none }}"),
            "x z True");
  EXPECT_EQ(render("{{ (messages | length) - 1 }}", R"({"messages": [1, 2, 3]})"), "2");
}

TEST(Jinja, SubscriptsAndSlices) {
  const char *v = R"({"m": [{"role": "user", "content": "héllo"}], "s": "héllo"})";
  EXPECT_EQ(render("{{ m[0]['role'] }} {{ m[0].content }} {{ m[-1].role }} [{{ m[5] }}]", v),
            "user héllo user []");
  EXPECT_EQ(render("{{ s[1] }} {{ s[::-1] }} {{ s[1:] }} {{ s[:-1] }} {{ s[::2] }}", v),
            "é olléh éllo héll hlo");
  EXPECT_EQ(render("{{ [1, 2, 3, 4][1:3] }} {{ [1, 2, 3][::-1] }} {{ [1, 2][5:] }}"),
            "[2, 3] [3, 2, 1] []");
}

TEST(Jinja, Filters) {
  EXPECT_EQ(render("{{ '  a b \n' | trim }}|{{ 'xxaxx' | trim('x') }}"), "a b|a");
  EXPECT_EQ(render("{{ 'hello' | upper }} {{ 'HeLLo' | lower }} {{ 'hELLO wORLD' | capitalize }} "
                   "{{ 'hello world' | title }}"),
            "HELLO hello Hello world Hello World");
  EXPECT_EQ(render("{{ [1, 2] | length }} {{ 'héllo' | length }} {{ {'a': 1} | count }}"), "2 5 1");
  EXPECT_EQ(render("{{ x | default('d') }} {{ '' | default('d', true) }} {{ 0 | d(5) }}"), "d d 0");
  EXPECT_EQ(render("{{ [1, 'a', none] | join(', ') }} {{ [3, 4] | first }} {{ [3, 4] | last }}"),
            "1, a, None 3 4");
  EXPECT_EQ(render("{{ 'ab' | list }} {{ 5 | string }} {{ '42' | int + 1 }} {{ 'x' | int }} "
                   "{{ 2.7 | int }} {{ '1.5' | float }}"),
            "['a', 'b'] 5 43 0 2 1.5");
  EXPECT_EQ(render("{{ 'a-b-a' | replace('a', 'x') }} {{ [3, 1, 2] | sort }} {{ [1, 2] | reverse | list }} "
                   "{{ [1, 1, 2] | unique | list }} {{ [1, 2.5] | sum }} {{ [4, 2, 9] | max }}"),
            "x-b-x [1, 2, 3] [2, 1] [1, 2] 3.5 9");
  EXPECT_EQ(render("{{ 'a\nb\n\nc' | indent(2) }}|{{ 'a\nb' | indent(2, true) }}"),
            "a\n  b\n\n  c|  a\n  b");
  EXPECT_EQ(render("{{ '<&>' | safe }} {{ '<&\"' | e }}"), "<&> &lt;&amp;&#34;");
  const char *msgs = R"({"m": [{"role": "user", "c": 1}, {"role": "assistant", "c": 2},
                               {"role": "user", "c": 3, "f": {"n": "x"}}]})";
  EXPECT_EQ(render("{{ m | selectattr('role', 'equalto', 'user') | map(attribute='c') | list }} "
                   "{{ m | rejectattr('role', 'eq', 'user') | list | length }} "
                   "{{ m | selectattr('f') | map(attribute='f.n') | join }} "
                   "{{ [1, 2, 3, 4] | select('odd') | list }} {{ ['a', 'B'] | map('upper') | list }}",
                   msgs),
            "[1, 3] 1 x [1, 3] ['A', 'B']");
}

TEST(Jinja, ToJsonAsTransformersWritesIt) {
  const char *v = R"({"t": {"name": "f", "p": {"x": [1, 2.5, true, null], "é": "a\"b\n"}, "e": {}, "l": []}})";
  EXPECT_EQ(render("{{ t | tojson }}", v),
            R"({"name": "f", "p": {"x": [1, 2.5, true, null], "é": "a\"b\n"}, "e": {}, "l": []})");
  EXPECT_EQ(render("{{ t.p | tojson(indent=2) }}", v),
            "{\n  \"x\": [\n    1,\n    2.5,\n    true,\n    null\n  ],\n  \"é\": \"a\\\"b\\n\"\n}");
  EXPECT_EQ(render("{{ {'b': 1, 'a': 'é'} | tojson(sort_keys=true, ensure_ascii=true) }}"),
            R"({"a": "\u00e9", "b": 1})");
  EXPECT_EQ(render("{{ [1, 2] | tojson(separators=(',', ':')) }}"), "[1,2]");
}

TEST(Jinja, Tests) {
  const char *v = R"({"s": "x", "d": {"a": 1}, "l": [1], "n": null, "i": 3, "f": 1.5, "b": true})";
  EXPECT_EQ(render("{{ s is string }}{{ d is mapping }}{{ l is iterable }}{{ s is iterable }}"
                   "{{ i is iterable }}{{ l is sequence }}{{ i is number }}{{ f is number }}"
                   "{{ b is number }}{{ i is integer }}{{ f is float }}",
                   v),
            "TrueTrueTrueTrueFalseTrueTrueTrueTrueTrueTrue");
  EXPECT_EQ(render("{{ n is none }}{{ u is defined }}{{ u is not defined }}{{ n is defined }}"
                   "{{ b is true }}{{ b is false }}{{ 1 is true }}{{ i is divisibleby(3) }}"
                   "{{ i is odd }}{{ s is equalto 'x' }}{{ i is in [3] }}",
                   v),
            "TrueFalseTrueTrueTrueFalseFalseTrueTrueTrueTrue");
}

TEST(Jinja, Methods) {
  EXPECT_EQ(render("{{ 'abc'.startswith('ab') }} {{ 'abc'.endswith(('x', 'c')) }} "
                   "{{ ' a '.strip() }}|{{ '\nab\n'.lstrip('\n') }}|{{ 'ab\n\n'.rstrip('\n') }}|"
                   "{{ 'a,b,,c'.split(',') }} {{ ' a  b '.split() }} {{ 'a<t>b'.split('<t>')[-1] }} "
                   "{{ 'ab'.upper() }} {{ 'x-y'.replace('-', '+') }} {{ ', '.join(['a', 'b']) }}"),
            "True True a|ab\n|ab|['a', 'b', '', 'c'] ['a', 'b'] b AB x+y a, b");
  EXPECT_EQ(render("{{ d.get('a') }} {{ d.get('z', 'dflt') }} {{ d.keys() | list }} "
                   "{{ d.values() | list }} {% for k, v in d.items() %}{{ k }}{{ v }}{% endfor %}",
                   R"({"d": {"a": 1, "b": 2}})"),
            "1 dflt ['a', 'b'] [1, 2] a1b2");
}

TEST(Jinja, Globals) {
  EXPECT_EQ(render("{{ range(3) | list }} {{ range(1, 7, 2) | list }} {{ dict(a=1) }}"),
            "[0, 1, 2] [1, 3, 5] {'a': 1}");
  std::string date = render("{{ strftime_now('%Y') }}");
  EXPECT_EQ(date.size(), 4u) << date;
  EXPECT_EQ(render("{{ raise_exception('Roles must alternate!') }}"), "ERROR: Roles must alternate!");
}

TEST(Jinja, ErrorSentences) {
  // Syntax errors name the template's source and line.
  EXPECT_EQ(render("a\n{% if x %}\nb"),
            "ERROR: the chat template t.jinja, line 2: the block opened here is not closed: "
            "expected 'elif' or 'else' or 'endif' before the end of the template");
  EXPECT_EQ(render("{% endfor %}"),
            "ERROR: the chat template t.jinja, line 1: unexpected 'endfor' (no open block it closes)");
  EXPECT_EQ(render("\n{% frobnicate %}"), "ERROR: the chat template t.jinja, line 2: unknown tag 'frobnicate'");
  EXPECT_EQ(render("{{ x y }}"),
            "ERROR: the chat template t.jinja, line 1: expected '}}' after the expression, found 'y'");
  EXPECT_EQ(render("{{ 'abc }}"), "ERROR: the chat template t.jinja, line 1: a string literal is not closed");
  EXPECT_EQ(render("\n\n{{ x\n"), "ERROR: the chat template t.jinja, line 3: '{{' is not closed with '}}'");
  EXPECT_EQ(render("{# x"), "ERROR: the chat template t.jinja, line 1: a comment '{#' is not closed with '#}'");
  EXPECT_EQ(render("{{ a ! b }}"), "ERROR: the chat template t.jinja, line 1: unexpected character '!'");
  EXPECT_EQ(render("{% for in x %}{% endfor %}"),
            "ERROR: the chat template t.jinja, line 1: expected a loop variable after 'for', found 'in'");
  EXPECT_EQ(render("{{ x) }}"), "ERROR: the chat template t.jinja, line 1: unexpected ')'");
  // Evaluation errors too.
  EXPECT_EQ(render("\n{{ 'a' + 1 }}"),
            "ERROR: the chat template t.jinja, line 2: unsupported operand type(s) for +: 'str' and 'int'");
  EXPECT_EQ(render("{{ x.y }}"), "ERROR: the chat template t.jinja, line 1: 'x' is undefined");
  EXPECT_EQ(render("{{ 1 | nope }}"), "ERROR: the chat template t.jinja, line 1: no filter named 'nope'");
  EXPECT_EQ(render("{{ 1 is nope }}"), "ERROR: the chat template t.jinja, line 1: no test named 'nope'");
  EXPECT_EQ(render("{% set x = 1 %}{% set x.a = 2 %}"),
            "ERROR: the chat template t.jinja, line 1: cannot assign attribute 'a' on 'x', which is "
            "not a namespace()");
  EXPECT_EQ(render("{% for x in 5 %}{% endfor %}"),
            "ERROR: the chat template t.jinja, line 1: 'int' object is not iterable");
  EXPECT_EQ(render("{{ 1 // 0 }}"), "ERROR: the chat template t.jinja, line 1: division by zero");
  EXPECT_EQ(render("{{ u | tojson }}"),
            "ERROR: the chat template t.jinja, line 1: tojson: an undefined value is not JSON serializable");
  EXPECT_EQ(render("{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}"),
            "ERROR: the chat template t.jinja, line 1: macro calls nest deeper than 64");
}

} // namespace

namespace {

TEST(Jinja, NothingEscapesRender) {
  // Whatever a template or its data do, render() answers with a Status.
  EXPECT_EQ(render("{{ x.99999999999999999999999 }}", R"({"x": [1]})").rfind("ERROR: ", 0), 0u);
  EXPECT_EQ(render("{{ m | map(attribute='99999999999999999999999') | list | length }}",
                   R"({"m": [[1]]})"),
            "1");
  EXPECT_EQ(render("{{ 99999999999999999999999 }}").rfind("ERROR: ", 0), 0u);
  EXPECT_EQ(render("{{ " + std::string(100000, '(') + "1" + std::string(100000, ')') + " }}"),
            "ERROR: the chat template t.jinja, line 1: the template nests deeper than 200 levels");
  std::string ifs;
  for (int i = 0; i < 5000; ++i)
    ifs += "{% if true %}";
  EXPECT_EQ(render(ifs), "ERROR: the chat template t.jinja, line 1: the template nests deeper than "
                         "200 levels");
  EXPECT_EQ(render("{% for i in range(1000000) %}{% endfor %}"),
            "ERROR: the chat template t.jinja, line 1: range() is limited to 100000 items in a "
            "chat template");
  // Nested loops multiply: 100000 x 100000 iterations would take hours.
  EXPECT_EQ(render("{% for i in range(100000) %}\n{% for j in range(100000) %}{% endfor %}"
                   "{% endfor %}"),
            "ERROR: the chat template t.jinja, line 2: the template's loops run more than "
            "1000000 iterations");
  // 10 x 10000 iterations are fine.
  EXPECT_EQ(render("{% for i in range(10) %}{% for j in range(10000) %}{% endfor %}{% endfor %}"
                   "ok"),
            "ok");
}

} // namespace

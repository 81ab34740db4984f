//===- JsonTest.cpp - core/Json -----------------------------------===//
#include "core/Json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

using namespace accel::rt;
using json::Type;
using json::Value;

namespace {

Value parseOk(std::string_view text) {
  StatusOr<Value> v = json::parse(text);
  EXPECT_TRUE(v.isOk()) << text << ": " << v.status().toString();
  return v.isOk() ? *v : Value();
}

std::string parseError(std::string_view text, const json::ParseOptions &opts = {}) {
  StatusOr<Value> v = json::parse(text, opts);
  EXPECT_FALSE(v.isOk()) << "parsed: " << std::string(text);
  if (v.isOk())
    return "";
  EXPECT_EQ(v.status().code(), StatusCode::kInvalidArgument);
  return v.status().message();
}

} // namespace

TEST(Json, Scalars) {
  EXPECT_TRUE(parseOk("null").isNull());
  EXPECT_TRUE(parseOk("true").asBool());
  EXPECT_TRUE(parseOk("false").isBool());
  EXPECT_FALSE(parseOk("false").asBool());
  EXPECT_EQ(parseOk("  \t\r\n 42 \n").asInt(), 42);
  EXPECT_TRUE(parseOk("42").isInteger());
  EXPECT_EQ(parseOk("-17").asInt(), -17);
  EXPECT_EQ(parseOk("0").asInt(), 0);
  EXPECT_TRUE(parseOk("-0").isInteger());
  EXPECT_DOUBLE_EQ(parseOk("1.5").asDouble(), 1.5);
  EXPECT_FALSE(parseOk("1.5").isInteger());
  EXPECT_FALSE(parseOk("1e3").isInteger());
  EXPECT_DOUBLE_EQ(parseOk("1e3").asDouble(), 1000.0);
  EXPECT_DOUBLE_EQ(parseOk("-2.5E-2").asDouble(), -0.025);
  EXPECT_DOUBLE_EQ(parseOk("1E+2").asDouble(), 100.0);
  EXPECT_EQ(parseOk("9223372036854775807").asInt(), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(parseOk("-9223372036854775808").asInt(), std::numeric_limits<int64_t>::min());
  // Beyond int64: a double only.
  Value big = parseOk("18446744073709551616");
  EXPECT_FALSE(big.isInteger());
  EXPECT_DOUBLE_EQ(big.asDouble(), 18446744073709551616.0);
  EXPECT_EQ(big.asInt(), std::numeric_limits<int64_t>::max());
  // Underflow reads as zero.
  EXPECT_EQ(parseOk("1e-400").asDouble(), 0.0);
  EXPECT_EQ(parseOk("0.0000000001e-320").asDouble(), 0.0);
  EXPECT_EQ(parseOk("-1e-99999999999999999999999").asDouble(), 0.0);
  // Overflow is an error whatever the exponent's sign: 10^400 / 10 is
  // still far beyond double's range (it used to read as 0).
  EXPECT_EQ(parseError("1" + std::string(400, '0') + "e-1"),
            "invalid JSON: number out of range at byte 0 (line 1, column 1)");
  EXPECT_EQ(parseError("-" + std::string(1, '9') + std::string(330, '0') + ".5e-20"),
            "invalid JSON: number out of range at byte 0 (line 1, column 1)");
  EXPECT_DOUBLE_EQ(parseOk("1" + std::string(300, '0') + "e-10").asDouble(), 1e290);
  EXPECT_EQ(parseOk("\"hi\"").asString(), "hi");
}

TEST(Json, StringEscapes) {
  EXPECT_EQ(parseOk(R"("a\"b\\c\/d\be\ff\ng\rh\ti")").asString(),
            "a\"b\\c/d\be\ff\ng\rh\ti");
  EXPECT_EQ(parseOk(R"("\u0041\u00e9\u20AC")").asString(), "A\xC3\xA9\xE2\x82\xAC");
  EXPECT_EQ(parseOk(R"("\u0000")").asString(), std::string("\0", 1));
  // A surrogate pair is one code point: U+1F600 is F0 9F 98 80.
  EXPECT_EQ(parseOk(R"("\ud83d\ude00")").asString(), "\xF0\x9F\x98\x80");
  EXPECT_EQ(parseOk(R"("\uDBFF\uDFFF")").asString(), "\xF4\x8F\xBF\xBF");
  // Raw UTF-8 passes through.
  EXPECT_EQ(parseOk("\"caf\xC3\xA9 \xE4\xBD\xA0 \xF0\x9F\x98\x80\"").asString(),
            "caf\xC3\xA9 \xE4\xBD\xA0 \xF0\x9F\x98\x80");
  EXPECT_EQ(parseOk("\"\"").asString(), "");
}

TEST(Json, ArraysAndObjects) {
  Value v = parseOk(R"({"a": [1, 2.5, "x", null, true, {}, []], "b": {"c": {"d": -1}}})");
  ASSERT_TRUE(v.isObject());
  ASSERT_EQ(v.size(), 2u);
  const Value *a = v.find("a");
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(a->isArray());
  ASSERT_EQ(a->size(), 7u);
  EXPECT_EQ(a->items()[0].asInt(), 1);
  EXPECT_EQ(a->items()[2].asString(), "x");
  EXPECT_TRUE(a->items()[3].isNull());
  EXPECT_TRUE(a->items()[5].isObject());
  EXPECT_EQ(a->items()[5].size(), 0u);
  EXPECT_TRUE(a->items()[6].isArray());
  EXPECT_EQ(v.find("b")->find("c")->find("d")->asInt(), -1);
  EXPECT_EQ(v.find("missing"), nullptr);
  EXPECT_EQ(a->find("a"), nullptr); // not an object
  // Members keep document order.
  Value o = parseOk(R"({"z": 1, "a": 2, "m": 3})");
  EXPECT_EQ(o.members()[0].first, "z");
  EXPECT_EQ(o.members()[1].first, "a");
  EXPECT_EQ(o.members()[2].first, "m");
}

TEST(Json, RepeatedKeyFindsTheLast) {
  Value v = parseOk(R"({"k": 1, "other": 0, "k": 2})");
  EXPECT_EQ(v.size(), 3u);
  EXPECT_EQ(v.find("k")->asInt(), 2);
}

TEST(Json, WrongTypeAccessorsGiveDefaults) {
  Value s("text");
  EXPECT_EQ(s.asInt(), 0);
  EXPECT_FALSE(s.asBool());
  EXPECT_TRUE(s.items().empty());
  EXPECT_TRUE(s.members().empty());
  EXPECT_EQ(Value(3).asString(), "");
  EXPECT_EQ(Value(2.9).asInt(), 2);
  EXPECT_EQ(Value(-2.9).asInt(), -2);
  EXPECT_EQ(Value(std::nan("")).asInt(), 0);
}

TEST(Json, ErrorsNameWhatAndWhere) {
  EXPECT_EQ(parseError(""), "invalid JSON: expected a value but found end of input at byte 0 "
                            "(line 1, column 1)");
  EXPECT_EQ(parseError("[1,\n 2,,]"),
            "invalid JSON: expected a value but found character ',' at byte 7 (line 2, column 4)");
  EXPECT_EQ(parseError("{\"a\" 1}"),
            "invalid JSON: expected ':' after object key but found character '1' at byte 5 "
            "(line 1, column 6)");
  EXPECT_EQ(parseError("[1 2]"),
            "invalid JSON: expected ',' or ']' in array but found character '2' at byte 3 "
            "(line 1, column 4)");
  EXPECT_EQ(parseError("1 2"),
            "invalid JSON: unexpected character '2' after the value at byte 2 (line 1, column 3)");
  EXPECT_EQ(parseError("\"abc"),
            "invalid JSON: unterminated string (it starts at byte 0) at byte 4 (line 1, column 5)");
  EXPECT_EQ(parseError("tru"),
            "invalid JSON: invalid literal (expected 'true') at byte 3 (line 1, column 4)");
  EXPECT_EQ(parseError("\"\xFF\""),
            "invalid JSON: invalid UTF-8 in string at byte 1 (line 1, column 2)");
  EXPECT_EQ(parseError("\"a\tb\""), "invalid JSON: raw control character 0x09 in string (write it "
                                    "as an escape) at byte 2 (line 1, column 3)");
}

TEST(Json, MalformedInputIsRejected) {
  const char *bad[] = {
      "[1,]", "{\"a\":1,}", "{,}", "[,1]", "{1:2}", "{\"a\"}", "[", "]", "{", "}", "nul",
      "True", "NaN", "Infinity", "-Infinity", "01", "-01", "1.", ".5", "+1", "-", "1e", "1e+",
      "0x10", "\"\\x\"", "\"\\u12\"", "\"\\u12G4\"", "\"\\ud800\"", "\"\\udc00\"",
      "\"\\ud800\\u0041\"", "\"\\ud800x\"", "'single'", "[1] x", "1e400", "-1e400",
      // Ill-formed UTF-8: overlong, surrogate, beyond U+10FFFF, truncated, stray continuation.
      "\"\xC0\xAF\"", "\"\xE0\x80\xAF\"", "\"\xED\xA0\x80\"", "\"\xF4\x90\x80\x80\"",
      "\"\xE2\x82\"", "\"\x80\"", "\"\xF5\x80\x80\x80\""};
  for (const char *t : bad) {
    StatusOr<Value> v = json::parse(t);
    EXPECT_FALSE(v.isOk()) << "accepted: " << t;
    if (!v.isOk()) {
      EXPECT_NE(v.status().message().find(" at byte "), std::string::npos)
          << v.status().message();
    }
  }
}

TEST(Json, DepthLimit) {
  json::ParseOptions opts;
  opts.maxDepth = 3;
  EXPECT_TRUE(json::parse("[[[1]]]", opts).isOk());
  EXPECT_TRUE(json::parse("{\"a\":[{\"b\":1}]}", opts).isOk());
  EXPECT_NE(parseError("[[[[1]]]]", opts).find("nesting deeper than 3 levels at byte 3"),
            std::string::npos);
  EXPECT_NE(parseError("{\"a\":{\"b\":{\"c\":{}}}}", opts).find("nesting deeper than 3 levels"),
            std::string::npos);
  // Hostile nesting fails cleanly instead of overflowing the stack.
  std::string deep(1000000, '[');
  EXPECT_NE(parseError(deep).find("nesting deeper than 512 levels"), std::string::npos);
}

TEST(Json, WriteCompactAndIndented) {
  Value v = Value::object();
  v.set("name", Value("x\"y\\z\n\x01\xC3\xA9"));
  v.set("n", Value(-3));
  v.set("f", Value(0.1));
  v.set("big", Value(1e300));
  v.set("list", Value(json::Array{Value(true), Value(), Value(uint64_t{7})}));
  v.set("empty", Value::object());
  EXPECT_EQ(json::write(v),
            R"({"name":"x\"y\\z\n\u0001é","n":-3,"f":0.1,"big":1e+300,)"
            R"("list":[true,null,7],"empty":{}})");
  Value small = Value::object();
  small.set("a", Value(json::Array{Value(1), Value(2)}));
  small.set("b", Value::array());
  EXPECT_EQ(json::write(small, 2), "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": []\n}");
  // NaN and infinities have no JSON spelling.
  EXPECT_EQ(json::write(Value(std::numeric_limits<double>::infinity())), "null");
  EXPECT_EQ(json::write(Value(std::nan(""))), "null");
  // Invalid UTF-8 is written as U+FFFD.
  EXPECT_EQ(json::quote("a\xFF" "b"), "\"a\xEF\xBF\xBD" "b\"");
}

TEST(Json, RoundTrip) {
  const char *text =
      R"({"a":[1,-2,3.25,1e-07,"s\u0000\ud83d\ude00",null,false],"b":{"c":{}},"d":"\u00e9"})";
  Value v = parseOk(text);
  Value again = parseOk(json::write(v));
  EXPECT_EQ(v, again);
  EXPECT_EQ(parseOk(json::write(v, 4)), v);
  EXPECT_EQ(json::write(parseOk("0.30000000000000004")), "0.30000000000000004");
  EXPECT_EQ(json::write(parseOk("123456789012345678")), "123456789012345678");
  // Negative zero keeps its sign through a round trip, and writing what
  // was read back gives the same text (accel-json-fuzzer found "-0", which
  // reads back as the integer 0).
  EXPECT_EQ(json::write(Value(-0.0)), "-0.0");
  for (const char *t : {"-0.0", "-0e5", "-0.000"}) {
    Value z = parseOk(t);
    std::string w = json::write(z);
    EXPECT_EQ(w, "-0.0") << t;
    EXPECT_TRUE(std::signbit(parseOk(w).asDouble())) << t;
    EXPECT_EQ(json::write(parseOk(w)), w) << t;
  }
  EXPECT_EQ(json::write(parseOk("-0")), "0"); // an integer: no negative zero
}

TEST(Json, BuildAndCompare) {
  Value v; // null
  v.set("x", Value(1));
  EXPECT_TRUE(v.isObject());
  v.set("x", Value(2)); // replaces
  EXPECT_EQ(v.size(), 1u);
  EXPECT_EQ(v.find("x")->asInt(), 2);
  Value a;
  a.push(Value("p"));
  a.push(Value(1.0));
  EXPECT_TRUE(a.isArray());
  EXPECT_EQ(a.size(), 2u);
  EXPECT_EQ(Value(1), Value(1.0));
  EXPECT_NE(Value(1), Value("1"));
  Value copy = a;
  copy.items()[0] = Value("q");
  EXPECT_EQ(a.items()[0].asString(), "p"); // a deep copy
  EXPECT_STREQ(json::typeName(Type::kObject), "object");
}

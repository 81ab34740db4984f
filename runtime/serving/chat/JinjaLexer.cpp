//===- JinjaLexer.cpp - a chat template's source to tokens ----------------===//
#include "runtime/serving/chat/JinjaLexer.h"

#include "runtime/serving/chat/JinjaValue.h"

#include <cctype>

namespace accel::rt::jinja {

namespace {

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

int lineAt(const std::string &s, size_t pos, size_t from, int line) {
  for (size_t i = from; i < pos && i < s.size(); ++i)
    if (s[i] == '\n')
      ++line;
  return line;
}

/// Appends the UTF-8 of code point `cp`.
void appendUtf8(std::string &out, char32_t cp) { out += fromCodePoints(std::u32string(1, cp)); }

class Lexer {
public:
  explicit Lexer(const std::string &src) : s_(src) {}

  std::vector<Token> run() {
    // keep_trailing_newline off: one newline ending the source is dropped.
    if (!s_.empty() && s_.back() == '\n') {
      s_.pop_back();
      if (!s_.empty() && s_.back() == '\r')
        s_.pop_back();
    }
    size_t pos = 0;
    bool lstripNext = false;  // a -%} / -}} / -#} before this text
    bool trimNewline = false; // a %} / #} before this text (trim_blocks)
    bool lineStarting = true; // Jinja2's line_starting: what came before ended a line
    while (pos <= s_.size()) {
      size_t open = findOpen(pos);
      std::string text = s_.substr(pos, open - pos);
      if (lstripNext) {
        size_t k = 0;
        while (k < text.size() && isSpace(text[k]))
          ++k;
        lineStarting = k > 0 && text[k - 1] == '\n';
        text.erase(0, k);
      } else if (trimNewline) {
        size_t n = text.rfind("\r\n", 0) == 0 ? 2 : (!text.empty() && text[0] == '\n') ? 1 : 0;
        lineStarting = n > 0;
        text.erase(0, n);
      }
      if (open == s_.size()) {
        emitText(text, pos);
        break;
      }
      const char kind = s_[open + 1]; // '{', '%' or '#'
      const bool minus = open + 2 < s_.size() && s_[open + 2] == '-';
      const bool plus = open + 2 < s_.size() && s_[open + 2] == '+';
      if (minus) {
        while (!text.empty() && isSpace(text.back()))
          text.pop_back();
      } else if (!plus && (kind == '%' || kind == '#')) {
        // lstrip_blocks: whitespace between the line's start and the tag goes.
        size_t l = text.rfind('\n');
        l = l == std::string::npos ? 0 : l + 1;
        if (l > 0 || lineStarting) {
          bool blank = l < text.size();
          for (size_t k = l; k < text.size(); ++k)
            blank = blank && isSpace(text[k]);
          if (blank)
            text.erase(l);
        }
      }
      lineStarting = false;
      emitText(text, pos);
      line_ = lineAt(s_, open, lineFrom_, line_);
      lineFrom_ = open;
      size_t body = open + 2 + ((minus || plus) ? 1 : 0);
      if (kind == '#') {
        size_t close = s_.find("#}", body);
        if (close == std::string::npos)
          throw SyntaxError(line_, "a comment '{#' is not closed with '#}'");
        const bool m = close > body && s_[close - 1] == '-';
        lstripNext = m;
        trimNewline = !m;
        pos = close + 2;
        continue;
      }
      const bool stmt = kind == '%';
      tokens_.push_back({stmt ? Token::Kind::kStmtBegin : Token::Kind::kExprBegin, "", line_});
      size_t end = lexInside(body, stmt, lstripNext);
      trimNewline = stmt && !lstripNext;
      pos = end;
    }
    tokens_.push_back({Token::Kind::kEnd, "", lineAt(s_, s_.size(), lineFrom_, line_)});
    return std::move(tokens_);
  }

private:
  size_t findOpen(size_t from) const {
    for (size_t i = from; i + 1 < s_.size(); ++i)
      if (s_[i] == '{' && (s_[i + 1] == '{' || s_[i + 1] == '%' || s_[i + 1] == '#'))
        return i;
    return s_.size();
  }

  void emitText(const std::string &text, size_t pos) {
    if (text.empty())
      return;
    int line = lineAt(s_, pos, lineFrom_, line_);
    tokens_.push_back({Token::Kind::kText, text, line});
  }

  /// Lexes from `p` to the closing }} or %}; returns the position after it.
  size_t lexInside(size_t p, bool stmt, bool &minusClose) {
    const char *close = stmt ? "%}" : "}}";
    const int openLine = line_;
    int depth = 0; // brackets open: a '}' inside {{ {'a': 1} }} is not the end
    while (true) {
      while (p < s_.size() && isSpace(s_[p])) {
        if (s_[p] == '\n')
          ++line_;
        ++p;
      }
      lineFrom_ = p;
      if (p >= s_.size())
        throw SyntaxError(openLine, std::string("'") + (stmt ? "{%" : "{{") +
                                        "' is not closed with '" + close + "'");
      if (depth == 0) {
        if (s_[p] == '-' && s_.compare(p + 1, 2, close) == 0) {
          tokens_.push_back({stmt ? Token::Kind::kStmtEnd : Token::Kind::kExprEnd, "", line_});
          minusClose = true;
          return p + 3;
        }
        if (s_.compare(p, 2, close) == 0) {
          tokens_.push_back({stmt ? Token::Kind::kStmtEnd : Token::Kind::kExprEnd, "", line_});
          minusClose = false;
          return p + 2;
        }
      }
      char c = s_[p];
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        size_t q = p;
        while (q < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[q])) || s_[q] == '_'))
          ++q;
        tokens_.push_back({Token::Kind::kName, s_.substr(p, q - p), line_});
        p = q;
      } else if (std::isdigit(static_cast<unsigned char>(c))) {
        size_t q = p;
        bool isFloat = false;
        while (q < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[q])) || s_[q] == '_'))
          ++q;
        if (q + 1 < s_.size() && s_[q] == '.' && std::isdigit(static_cast<unsigned char>(s_[q + 1]))) {
          isFloat = true;
          ++q;
          while (q < s_.size() && std::isdigit(static_cast<unsigned char>(s_[q])))
            ++q;
        }
        if (q < s_.size() && (s_[q] == 'e' || s_[q] == 'E')) {
          size_t r = q + 1;
          if (r < s_.size() && (s_[r] == '+' || s_[r] == '-'))
            ++r;
          if (r < s_.size() && std::isdigit(static_cast<unsigned char>(s_[r]))) {
            isFloat = true;
            q = r;
            while (q < s_.size() && std::isdigit(static_cast<unsigned char>(s_[q])))
              ++q;
          }
        }
        std::string num;
        for (size_t k = p; k < q; ++k)
          if (s_[k] != '_')
            num += s_[k];
        tokens_.push_back({isFloat ? Token::Kind::kFloat : Token::Kind::kInt, num, line_});
        p = q;
      } else if (c == '\'' || c == '"') {
        p = lexString(p);
      } else {
        static const char *const kOps[] = {"//", "**", "==", "!=", "<=", ">=", "+", "-", "*", "/",
                                           "%",  "~",  "<",  ">",  "(",  ")",  "[", "]", "{", "}",
                                           ",",  ".",  ":",  "|",  "="};
        bool found = false;
        for (const char *op : kOps) {
          size_t n = std::char_traits<char>::length(op);
          if (s_.compare(p, n, op) == 0) {
            std::string o(op);
            if (o == "(" || o == "[" || o == "{")
              ++depth;
            else if (o == ")" || o == "]" || o == "}") {
              if (depth == 0)
                throw SyntaxError(line_, "unexpected '" + o + "'");
              --depth;
            }
            tokens_.push_back({Token::Kind::kOp, o, line_});
            p += n;
            found = true;
            break;
          }
        }
        if (!found)
          throw SyntaxError(line_, std::string("unexpected character '") + c + "'");
      }
    }
  }

  /// A string literal with Python's escapes; returns the position after it.
  size_t lexString(size_t p) {
    const char quote = s_[p];
    const int startLine = line_;
    std::string out;
    size_t q = p + 1;
    while (true) {
      if (q >= s_.size())
        throw SyntaxError(startLine, "a string literal is not closed");
      char c = s_[q];
      if (c == quote)
        break;
      if (c == '\n')
        ++line_;
      if (c != '\\' || q + 1 >= s_.size()) {
        out += c;
        ++q;
        continue;
      }
      char e = s_[q + 1];
      q += 2;
      switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case '0': out += '\0'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'v': out += '\v'; break;
      case '\\': out += '\\'; break;
      case '\'': out += '\''; break;
      case '"': out += '"'; break;
      case '\n': ++line_; break; // a line continuation
      case 'x':
      case 'u':
      case 'U': {
        size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        if (q + n > s_.size())
          throw SyntaxError(line_, std::string("a truncated \\") + e + " escape");
        char32_t cp = 0;
        for (size_t k = 0; k < n; ++k) {
          char h = s_[q + k];
          int v = std::isdigit(static_cast<unsigned char>(h)) ? h - '0'
                  : (h >= 'a' && h <= 'f')                   ? h - 'a' + 10
                  : (h >= 'A' && h <= 'F')                   ? h - 'A' + 10
                                                             : -1;
          if (v < 0)
            throw SyntaxError(line_, std::string("a truncated \\") + e + " escape");
          cp = cp * 16 + char32_t(v);
        }
        appendUtf8(out, cp);
        q += n;
        break;
      }
      default: // Python keeps an unknown escape as it is
        out += '\\';
        out += e;
      }
    }
    tokens_.push_back({Token::Kind::kString, out, startLine});
    return q + 1;
  }

  std::string s_;
  std::vector<Token> tokens_;
  int line_ = 1;
  size_t lineFrom_ = 0; // line_ is the line of this offset
};

} // namespace

std::vector<Token> lex(const std::string &source) { return Lexer(source).run(); }

} // namespace accel::rt::jinja

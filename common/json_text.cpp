#include "common/json_text.hpp"

#include <vector>

#include "common/error.hpp"
#include "common/gzip_text.hpp"
#include "common/input_file.hpp"

namespace infraplan {

namespace {

/// Builds the document like nlohmann's own DOM parser and checks depth and duplicate keys on
/// the way. Exceptions thrown here leave nlohmann::json::sax_parse and reach the caller.
class StrictBuilder : public nlohmann::json_sax<Json> {
 public:
  explicit StrictBuilder(Json& root) : root_(root) {}

  bool null() override { return put(Json(nullptr)); }
  bool boolean(bool v) override { return put(Json(v)); }
  bool number_integer(number_integer_t v) override { return put(Json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return put(Json(v)); }
  bool number_float(number_float_t v, const string_t&) override { return put(Json(v)); }
  bool string(string_t& v) override { return put(Json(std::move(v))); }
  bool binary(binary_t&) override { throw Error("binary values are not JSON"); }

  bool start_object(std::size_t) override { return open(Json::object()); }
  bool key(string_t& k) override {
    Json& obj = *stack_.back();
    keys_.back() = k;
    if (obj.contains(k)) throw Error("duplicate key '" + path() + "' (each key may appear once)");
    pending_ = &obj[k];
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(Json::array()); }
  bool end_array() override { return close(); }

  bool parse_error(std::size_t byte, const std::string&, const nlohmann::detail::exception& e) override {
    error_byte = byte;
    error_what = e.what();
    error_id = e.id;
    return false;
  }

  std::size_t error_byte = 0;
  std::string error_what;
  int error_id = 0;

 private:
  bool put(Json&& v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return true;
    }
    Json& top = *stack_.back();
    if (top.is_array()) {
      top.push_back(std::move(v));
    } else {
      *pending_ = std::move(v);
    }
    return true;
  }

  bool open(Json&& v) {
    if (int(stack_.size()) >= kMaxJsonDepth)
      throw Error("nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels at '" + path() + "'");
    Json* slot;
    if (stack_.empty()) {
      root_ = std::move(v);
      slot = &root_;
    } else if (stack_.back()->is_array()) {
      stack_.back()->push_back(std::move(v));
      slot = &stack_.back()->back();
    } else {
      *pending_ = std::move(v);
      slot = pending_;
    }
    stack_.push_back(slot);
    keys_.emplace_back();
    return true;
  }

  bool close() {
    stack_.pop_back();
    keys_.pop_back();
    return true;
  }

  /// "training.tp", "workload.classes[2].name": where the parser is, for messages.
  std::string path() const {
    std::string p;
    for (std::size_t i = 0; i < stack_.size(); ++i) {
      const Json& level = *stack_[i];
      if (level.is_array()) {
        // An enclosing array's current element is its last; the innermost one's is the next.
        p += "[" + std::to_string(level.size() - (i + 1 == stack_.size() ? 0 : 1)) + "]";
      } else if (!keys_[i].empty()) {
        p += (p.empty() ? "" : ".") + keys_[i];
      }
    }
    return p.empty() ? "top level" : p;
  }

  Json& root_;
  std::vector<Json*> stack_;
  std::vector<std::string> keys_;  // the current key of each open object
  Json* pending_ = nullptr;        // where the next object value goes
};

std::string line_col(const std::string& text, std::size_t byte) {
  // nlohmann reports the byte offset (1-based, the byte after the error); turn it into
  // line:column for people.
  std::size_t line = 1, col = 1;
  for (std::size_t i = 0; i < text.size() && i + 1 < byte; ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return std::to_string(line) + ":" + std::to_string(col);
}

}  // namespace

Json parse_json_text(const std::string& text, const std::string& origin) {
  Json root;
  StrictBuilder b(root);
  bool ok = false;
  try {
    ok = Json::sax_parse(text, &b, nlohmann::json::input_format_t::json, /*strict=*/true,
                         /*ignore_comments=*/false);
  } catch (const Error& e) {
    throw Error(origin + ": " + e.what());
  } catch (const Json::exception& e) {
    throw Error(origin + ": malformed JSON (" + e.what() + ")");
  }
  if (!ok) {
    std::string what = b.error_what;
    auto pos = what.find("syntax error");
    if (pos == std::string::npos) pos = what.find("number overflow");
    if (pos != std::string::npos) what = what.substr(pos);
    throw Error(origin + ":" + line_col(text, b.error_byte) + ": malformed JSON (" + what + ")");
  }
  return root;
}

std::string read_text_file(const std::string& path) { return read_input_file(path, kMaxJsonFileBytes, "file"); }

Json read_json_file(const std::string& path) {
  std::string text = read_input_file(path, kMaxJsonFileBytes, "JSON file");
  if (is_gzip(text)) text = gunzip(text, kMaxJsonFileBytes, path);
  return parse_json_text(text, path);
}

}  // namespace infraplan

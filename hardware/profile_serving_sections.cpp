// The "serving_kernels" and "serving_attention" sections of a profile: the serving engine's kernels.
#include "hardware/profile_sections.hpp"

#include <cstdint>
#include <string>
#include <utility>

#include "hardware/profile_json.hpp"

namespace infraplan::hw {

using namespace profile_json;

// serving_kernels and serving_attention, where present.
void parse_serving_sections(const Json& j, const std::string& origin, Profile& p) {
  if (j.contains("serving_kernels")) {
    const Json& sk = j["serving_kernels"];
    const std::string sp = "serving_kernels";
    Profile::RowKernelTable t;
    t.rows = axis(need(sk, "rows", sp, origin), sp + ".rows", origin);
    if (sk.contains("source") && sk["source"].is_string()) t.source = sk["source"].get<std::string>();
    const Json& ks = need(sk, "kernels", sp, origin);
    if (!ks.is_object())
      fail(origin, sp + ".kernels", "expected an object of kernel name -> [{width, seconds}]");
    for (auto it = ks.begin(); it != ks.end(); ++it) {
      const std::string kp = sp + ".kernels." + it.key();
      if (!it->is_array() || it->empty()) fail(origin, kp, "expected a non-empty array of {width, seconds}");
      auto& widths = t.kernels[it.key()];
      for (std::size_t i = 0; i < it->size(); ++i) {
        const std::string wp = kp + "[" + std::to_string(i) + "]";
        const double w = number(need((*it)[i], "width", wp, origin), wp + ".width", origin, 1);
        if (!widths.empty() && w <= widths.back().first) fail(origin, wp + ".width", "widths must ascend");
        widths.emplace_back(w, seconds_grid(need((*it)[i], "seconds", wp, origin), wp + ".seconds", origin,
                                            t.rows.size(), "one per row count"));
      }
    }
    p.serving_kernels = std::move(t);
  }
  if (j.contains("serving_attention")) {
    const Json& sa = j["serving_attention"];
    const std::string sp = "serving_attention";
    if (!sa.is_object()) fail(origin, sp, "expected an object {prefill: [...], decode: [...]}");
    Profile::ServingAttention t;
    if (sa.contains("source") && sa["source"].is_string()) t.source = sa["source"].get<std::string>();
    if (sa.contains("decode_tile_tokens"))
      t.decode_tile_tokens =
          int(integer(sa["decode_tile_tokens"], sp + ".decode_tile_tokens", origin, 1, 4096));
    if (sa.contains("prefill_key_tile"))
      t.prefill_key_tile = int(integer(sa["prefill_key_tile"], sp + ".prefill_key_tile", origin, 16, 1024));
    if (sa.contains("prefill_ctas_per_sm"))
      t.prefill_ctas_per_sm =
          int(integer(sa["prefill_ctas_per_sm"], sp + ".prefill_ctas_per_sm", origin, 1, 32));
    if (sa.contains("prefill_row_groups")) {
      t.prefill_row_groups =
          int(integer(sa["prefill_row_groups"], sp + ".prefill_row_groups", origin, 1, 128));
      if (128 % t.prefill_row_groups != 0)
        fail(origin, sp + ".prefill_row_groups",
             "expected a divisor of 128 (the query rows of a CTA): 1, 2, 4, …");
    }
    constexpr std::int64_t kMaxTokens = std::int64_t(1) << 24;
    // Every point: the head shape it was timed with and its kernel time.
    auto heads_and_seconds = [&](const Json& q, const std::string& f, int& heads, int& kv_heads,
                                 double& seconds) {
      heads = int(integer(need(q, "heads", f, origin), f + ".heads", origin, 1, kMaxHeadsOrDim));
      kv_heads = int(integer(need(q, "kv_heads", f, origin), f + ".kv_heads", origin, 1, heads));
      seconds = number(need(q, "seconds", f, origin), f + ".seconds", origin, 1e-9);
      if (seconds > 10) fail(origin, f + ".seconds", "expected a kernel time below 10 s");
    };
    const Json& pre = need(sa, "prefill", sp, origin);
    if (!pre.is_array())
      fail(origin, sp + ".prefill", "expected an array of {heads, kv_heads, chunks, seconds}");
    for (std::size_t i = 0; i < pre.size(); ++i) {
      const std::string f = sp + ".prefill[" + std::to_string(i) + "]";
      Profile::ServingAttention::Prefill pt;
      heads_and_seconds(pre[i], f, pt.heads, pt.kv_heads, pt.seconds);
      const Json& ch = need(pre[i], "chunks", f, origin);
      if (!ch.is_array() || ch.empty() || ch.size() > 4096)
        fail(origin, f + ".chunks", "expected 1 to 4096 [new tokens, cached tokens] pairs");
      for (std::size_t ci = 0; ci < ch.size(); ++ci) {
        const std::string cf = f + ".chunks[" + std::to_string(ci) + "]";
        if (!ch[ci].is_array() || ch[ci].size() != 2)
          fail(origin, cf, "expected [new tokens, cached tokens]");
        pt.chunks.push_back({integer(ch[ci][0], cf + "[0]", origin, 1, kMaxTokens),
                             integer(ch[ci][1], cf + "[1]", origin, 0, kMaxTokens)});
      }
      t.prefill.push_back(std::move(pt));
    }
    const Json& dec = need(sa, "decode", sp, origin);
    if (!dec.is_array()) fail(origin, sp + ".decode", "expected an array of decode batches");
    for (std::size_t i = 0; i < dec.size(); ++i) {
      const std::string f = sp + ".decode[" + std::to_string(i) + "]";
      Profile::ServingAttention::Decode pt;
      heads_and_seconds(dec[i], f, pt.heads, pt.kv_heads, pt.seconds);
      pt.batch = integer(need(dec[i], "batch", f, origin), f + ".batch", origin, 1, 1 << 20);
      pt.context = integer(need(dec[i], "context", f, origin), f + ".context", origin, 1, kMaxTokens);
      pt.shared_prefix =
          integer(need(dec[i], "shared_prefix", f, origin), f + ".shared_prefix", origin, 0, pt.context);
      pt.groups = integer(need(dec[i], "groups", f, origin), f + ".groups", origin, 1, pt.batch);
      const std::int64_t all = pt.batch * ((pt.context + 15) / 16);
      pt.unique_blocks =
          integer(need(dec[i], "unique_blocks", f, origin), f + ".unique_blocks", origin, 1, all);
      t.decode.push_back(pt);
    }
    p.serving_attention = std::move(t);
  }
}
}  // namespace infraplan::hw

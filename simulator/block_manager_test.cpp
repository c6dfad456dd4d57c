#include "simulator/block_manager.hpp"

#include <gtest/gtest.h>

#include <memory>

#include "simulator/serving_random.hpp"

using namespace infraplan::sim::serve;

namespace {
Request req(std::int64_t id, std::int64_t prompt, std::uint64_t key = 0, std::int64_t shared = 0) {
  Request r;
  r.id = id;
  r.prompt_tokens = prompt;
  r.output_tokens = 8;
  r.content_key = key;
  r.shared_tokens = shared;
  return r;
}
}  // namespace

TEST(BlockManager, AllocateFreeRoundTrip) {
  BlockManager bm(10, 16, false);
  Sequence s(req(0, 40), 16);
  PrefixMatch none;
  ASSERT_TRUE(bm.can_allocate(s, none, 40));
  bm.allocate(s, none, 40);
  EXPECT_EQ(s.block_table.size(), 3u);
  EXPECT_EQ(bm.num_free_blocks(), 7);
  bm.check_invariants({&s});
  bm.free(s);
  EXPECT_EQ(bm.num_free_blocks(), 10);
  bm.check_invariants({});
}

TEST(BlockManager, DoubleFreeIsCaught) {
  BlockManager bm(4, 16, false);
  Sequence s(req(0, 16), 16);
  bm.allocate(s, {}, 16);
  auto table = s.block_table;
  bm.free(s);
  s.block_table = table;  // pretend the caller kept a stale table
  EXPECT_THROW(bm.free(s), std::logic_error);
}

TEST(BlockManager, WatermarkKeepsBlocksFree) {
  BlockManager bm(100, 16, false, 0.1);  // 10 blocks reserved at admission
  Sequence s(req(0, 16 * 91), 16);
  EXPECT_FALSE(bm.can_allocate(s, {}, 16 * 91));
  EXPECT_TRUE(bm.can_allocate(s, {}, 16 * 90));
  bm.allocate(s, {}, 16 * 90);
  EXPECT_TRUE(bm.can_append(s, 16 * 10)) << "running sequences may use the watermark";
}

TEST(BlockManager, PrefixHitsShareBlocksAndCountStatistics) {
  BlockManager bm(64, 16, true);
  Sequence a(req(0, 100, 42, 64), 16), b(req(1, 100, 42, 64), 16);
  bm.allocate(a, bm.match_prefix(a), 100);
  a.num_computed = 100;
  bm.register_computed(a);
  auto m = bm.match_prefix(b);
  EXPECT_EQ(m.blocks.size(), 4u);  // 64 shared tokens = 4 full blocks; block 4 differs
  EXPECT_EQ(m.tokens, 64);
  ASSERT_TRUE(bm.can_allocate(b, m, 100));
  bm.allocate(b, m, 100);
  EXPECT_EQ(b.num_computed, 64);
  EXPECT_EQ(b.cached_tokens, 64);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(a.block_table[std::size_t(i)], b.block_table[std::size_t(i)]);
  bm.check_invariants({&a, &b});
  bm.free(a);
  bm.free(b);
  bm.check_invariants({});
  EXPECT_EQ(bm.cache().stats.hit_tokens, 64);
  // Freed cached blocks stay findable until evicted.
  Sequence c(req(2, 100, 42, 64), 16);
  EXPECT_EQ(bm.match_prefix(c).blocks.size(), 4u);
}

TEST(BlockManager, CopyOnWriteWhenAFullyCachedPromptRecomputesItsLastToken) {
  BlockManager bm(16, 16, true);
  Sequence a(req(0, 32, 7, 32), 16), b(req(1, 32, 7, 32), 16);
  bm.allocate(a, bm.match_prefix(a), 32);
  a.num_computed = 32;
  bm.register_computed(a);
  auto m = bm.match_prefix(b);
  EXPECT_EQ(m.blocks.size(), 2u);
  EXPECT_EQ(m.tokens, 31);  // one token left to compute so the step can sample
  ASSERT_TRUE(bm.can_allocate(b, m, 32));
  bm.allocate(b, m, 32);
  EXPECT_EQ(bm.stats().cow_copies, 1);
  EXPECT_EQ(a.block_table[0], b.block_table[0]);
  EXPECT_NE(a.block_table[1], b.block_table[1]);
  bm.check_invariants({&a, &b});
}

TEST(BlockManager, LruEvictsLeastRecentlyFreed) {
  BlockManager bm(4, 16, true);
  Sequence a(req(0, 32, 1, 32), 16);
  bm.allocate(a, {}, 32);
  a.num_computed = 32;
  bm.register_computed(a);
  bm.free(a);  // 2 cached evictable blocks
  Sequence big(req(1, 48), 16);
  bm.allocate(big, {}, 48);  // 2 free + 1 evicted
  EXPECT_EQ(bm.cache().stats.evictions, 1);
  bm.check_invariants({&big});
  // The tail block of a's chain went first, so a's first block is still a hit.
  Sequence again(req(2, 32, 1, 32), 16);
  EXPECT_EQ(bm.match_prefix(again).blocks.size(), 1u);
}

TEST(BlockManager, SwapOutAndIn) {
  BlockManager bm(8, 16, false, 0.0, 4);
  Sequence s(req(0, 48), 16);
  bm.allocate(s, {}, 48);
  ASSERT_TRUE(bm.can_swap_out(s));
  EXPECT_EQ(bm.swap_out(s), 3);
  EXPECT_EQ(bm.num_free_blocks(), 8);
  EXPECT_EQ(bm.host_free_blocks(), 1);
  ASSERT_TRUE(bm.can_swap_in(s));
  EXPECT_EQ(bm.swap_in(s), 3);
  EXPECT_EQ(bm.host_free_blocks(), 4);
  bm.check_invariants({&s});
}

TEST(BlockManager, LongRandomRunKeepsInvariants) {
  BlockManager bm(200, 16, true, 0.01, 50);
  Rng rng(123);
  std::vector<std::unique_ptr<Sequence>> live;
  std::int64_t next = 0;
  for (int step = 0; step < 20000; ++step) {
    const double u = rng.uniform();
    if (u < 0.4 || live.empty()) {
      auto s =
          std::make_unique<Sequence>(req(next++, rng.uniform_int(1, 300),
                                         1 + std::uint64_t(rng.uniform_int(0, 3)), rng.uniform_int(0, 200)),
                                     16);
      auto m = bm.match_prefix(*s);
      const std::int64_t want = s->len();
      if (bm.can_allocate(*s, m, want)) {
        bm.allocate(*s, m, want);
        s->num_computed = want;
        bm.register_computed(*s);
        live.push_back(std::move(s));
      }
    } else if (u < 0.7) {
      auto& s = live[std::size_t(rng.uniform_int(0, std::int64_t(live.size()) - 1))];
      if (s->block_table.empty()) continue;
      const std::int64_t grow = rng.uniform_int(1, 20);
      if (bm.can_append(*s, grow)) {
        bm.append(*s, grow);
        s->num_generated += grow;
        s->num_computed += grow;
        bm.register_computed(*s);
      }
    } else if (u < 0.75) {
      auto& s = live[std::size_t(rng.uniform_int(0, std::int64_t(live.size()) - 1))];
      if (!s->block_table.empty() && bm.can_swap_out(*s))
        bm.swap_out(*s);
      else if (s->block_table.empty() && s->swapped_blocks > 0 && bm.can_swap_in(*s))
        bm.swap_in(*s);
    } else {
      const std::size_t i = std::size_t(rng.uniform_int(0, std::int64_t(live.size()) - 1));
      if (live[i]->swapped_blocks > 0) continue;
      bm.free(*live[i]);
      live.erase(live.begin() + std::ptrdiff_t(i));
    }
    if (step % 97 == 0) {
      std::vector<const Sequence*> v;
      for (auto& s : live)
        if (!s->block_table.empty()) v.push_back(s.get());
      ASSERT_NO_THROW(bm.check_invariants(v)) << "step " << step;
    }
  }
  for (auto& s : live)
    if (!s->block_table.empty()) bm.free(*s);
  bm.check_invariants({});
  EXPECT_EQ(bm.num_free_blocks(), 200);
  EXPECT_GT(bm.cache().stats.hit_tokens, 0);
}

TEST(BlockManager, SessionsShareTheirConversationAndOnlyTheSystemPromptWithOthers) {
  BlockManager bm(64, 16, true);
  auto turn = [](std::int64_t id, std::int64_t prompt, std::uint64_t session) {
    Request r = req(id, prompt, 9, 32);
    r.session_key = session;
    r.session_tokens = prompt + 8;
    return r;
  };
  Sequence a(turn(0, 100, 111), 16);
  bm.allocate(a, bm.match_prefix(a), 100);
  a.num_computed = 100;
  bm.register_computed(a);
  Sequence other(turn(1, 100, 222), 16), next(turn(2, 150, 111), 16);
  EXPECT_EQ(bm.match_prefix(other).blocks.size(), 2u) << "the 32-token system prompt only";
  EXPECT_EQ(bm.match_prefix(next).blocks.size(), 6u) << "all of the first turn's full blocks";
}

// The per-step check of debug and sanitizer builds (O(live blocks)) catches what the whole scan
// catches about the live sequences: a block held but not counted, a block in use that no live
// sequence holds, an id out of range; and it leaves nothing behind between calls.
TEST(BlockManager, LiveBlockCheckCatchesMiscountedBlocks) {
  BlockManager bm(8, 16, true);
  Sequence a(req(0, 40, 7, 32), 16), b(req(1, 40, 7, 32), 16);
  bm.allocate(a, {}, 40);
  bm.register_computed(a);
  bm.allocate(b, bm.match_prefix(b), 40);
  EXPECT_NO_THROW(bm.check_live_blocks({&a, &b}));
  EXPECT_NO_THROW(bm.check_invariants({&a, &b}));
  // A sequence left out: its blocks are in use but nobody holds them (or shared ones miscounted).
  EXPECT_THROW(bm.check_live_blocks({&a}), std::logic_error);
  // A table naming a free block.
  Sequence fake(req(2, 16), 16);
  fake.block_table = {7};
  EXPECT_THROW(bm.check_live_blocks({&a, &b, &fake}), std::logic_error);
  fake.block_table = {8};
  EXPECT_THROW(bm.check_live_blocks({&a, &b, &fake}), std::logic_error);
  // Still consistent after the failures (the counts were reset).
  EXPECT_NO_THROW(bm.check_live_blocks({&a, &b}));
  bm.free(a);
  bm.free(b);
  EXPECT_NO_THROW(bm.check_live_blocks({}));
  EXPECT_NO_THROW(bm.check_invariants({}));
}

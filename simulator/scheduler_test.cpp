#include "simulator/scheduler.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

using namespace infraplan::sim::serve;

namespace {
struct Fixture {
  BlockManager bm;
  Scheduler sched;
  std::vector<std::unique_ptr<Sequence>> seqs;
  Fixture(const SchedulerConfig& c, std::int32_t blocks, bool cache = false, std::int64_t host = 0)
      : bm(blocks, 16, cache, 0.0, host), sched(c, bm) {}
  Sequence* add(std::int64_t prompt, std::int64_t out, int prio = 0) {
    Request r;
    r.id = std::int64_t(seqs.size());
    r.arrival_s = double(r.id);
    r.prompt_tokens = prompt;
    r.output_tokens = out;
    r.priority = prio;
    seqs.push_back(std::make_unique<Sequence>(r, 16));
    sched.add(seqs.back().get());
    return seqs.back().get();
  }
  std::vector<Sequence*> step(SchedulerOutput* o = nullptr) {
    auto out = sched.schedule();
    if (o) *o = out;
    return sched.update(out, std::vector<std::int64_t>(out.seqs.size(), 1));
  }
};
}  // namespace

TEST(Scheduler, ChunkedPrefillRespectsTheTokenBudget) {
  SchedulerConfig c;
  c.max_batched_tokens = 256;
  Fixture f(c, 1000);
  Sequence* a = f.add(1000, 4);
  SchedulerOutput o;
  f.step(&o);
  EXPECT_EQ(o.num_tokens, 256);
  EXPECT_FALSE(o.seqs[0].samples);
  for (int i = 0; i < 3; ++i) f.step(&o);
  EXPECT_EQ(a->num_computed, 1000);
  EXPECT_EQ(a->num_generated, 1);  // the last chunk sampled the first token
  Sequence* b = f.add(100, 2);
  f.step(&o);  // a decodes (1 token) and b prefills in the same step
  ASSERT_EQ(o.seqs.size(), 2u);
  EXPECT_EQ(o.seqs[0].seq, a);
  EXPECT_EQ(o.seqs[0].q_tokens, 1);
  EXPECT_EQ(o.seqs[1].seq, b);
  EXPECT_EQ(o.seqs[1].q_tokens, 100);
}

TEST(Scheduler, WithoutChunkingPrefillsRunAloneAndDecodesWait) {
  SchedulerConfig c;
  c.chunked_prefill = false;
  c.max_batched_tokens = 4096;
  Fixture f(c, 1000);
  f.add(100, 10);
  SchedulerOutput o;
  f.step(&o);
  f.add(2000, 10);
  f.step(&o);
  ASSERT_EQ(o.seqs.size(), 1u);
  EXPECT_TRUE(o.seqs[0].prefill);
  EXPECT_EQ(o.num_tokens, 2000);
  f.step(&o);
  EXPECT_EQ(o.seqs.size(), 2u);
  EXPECT_EQ(o.num_prefill_tokens, 0);
}

TEST(Scheduler, MaxNumSeqsCapsTheBatch) {
  SchedulerConfig c;
  c.max_num_seqs = 3;
  Fixture f(c, 1000);
  for (int i = 0; i < 5; ++i) f.add(10, 5);
  SchedulerOutput o;
  f.step(&o);
  EXPECT_EQ(o.seqs.size(), 3u);
  EXPECT_EQ(f.sched.waiting().size(), 2u);
}

TEST(Scheduler, RecomputePreemptionFreesTheLatestAndFinishesEverything) {
  SchedulerConfig c;
  Fixture f(c, 12);  // 192 tokens of KV
  for (int i = 0; i < 4; ++i) f.add(40, 60);
  std::int64_t finished = 0;
  for (int i = 0; i < 2000 && f.sched.has_work(); ++i) {
    finished += std::int64_t(f.step().size());
    std::vector<const Sequence*> live;
    for (auto& s : f.seqs)
      if (!s->block_table.empty()) live.push_back(s.get());
    f.bm.check_invariants(live);
  }
  EXPECT_EQ(finished, 4);
  EXPECT_GT(f.sched.num_preemptions(), 0);
  for (auto& s : f.seqs) EXPECT_EQ(s->num_generated, 60);
  EXPECT_EQ(f.bm.num_free_blocks(), 12);
}

TEST(Scheduler, SwapPreemptionMovesKvToHost) {
  SchedulerConfig c;
  c.preemption = Preemption::Swap;
  Fixture f(c, 12, false, 64);
  for (int i = 0; i < 4; ++i) f.add(40, 60);
  std::int64_t swapped = 0, finished = 0;
  for (int i = 0; i < 2000 && f.sched.has_work(); ++i) {
    SchedulerOutput o;
    finished += std::int64_t(f.step(&o).size());
    swapped += o.swapped_out_blocks;
  }
  EXPECT_EQ(finished, 4);
  EXPECT_GT(swapped, 0);
}

TEST(Scheduler, PriorityAdmitsUrgentFirst) {
  SchedulerConfig c;
  c.policy = Policy::Priority;
  c.max_num_seqs = 1;
  Fixture f(c, 100);
  f.add(10, 2, 5);
  Sequence* urgent = f.add(10, 2, 0);
  SchedulerOutput o;
  f.step(&o);
  ASSERT_EQ(o.seqs.size(), 1u);
  EXPECT_EQ(o.seqs[0].seq, urgent);
}

TEST(Scheduler, StaticBatchWaitsForItsLongestMember) {
  SchedulerConfig c;
  c.batching = Batching::Static;
  c.max_num_seqs = 2;
  Fixture f(c, 100);
  f.add(10, 2);
  f.add(10, 6);
  f.add(10, 2);
  SchedulerOutput o;
  f.step(&o);  // prefill both
  EXPECT_EQ(o.seqs.size(), 2u);
  f.step(&o);  // first finishes
  f.step(&o);
  EXPECT_EQ(o.padding_seqs, 1);
  EXPECT_EQ(f.sched.waiting().size(), 1u) << "no admission until the batch is done";
  for (int i = 0; i < 10; ++i) f.step(&o);
  EXPECT_FALSE(f.sched.has_work());
}

TEST(Scheduler, SpeculativeStepsVerifyKPlusOneTokens) {
  SchedulerConfig c;
  c.spec_tokens = 3;
  Fixture f(c, 100);
  Sequence* s = f.add(20, 10);
  f.step();
  auto out = f.sched.schedule();
  ASSERT_EQ(out.seqs.size(), 1u);
  EXPECT_EQ(out.seqs[0].q_tokens, 4);
  f.sched.update(out, {3});
  EXPECT_EQ(s->num_generated, 4);
  EXPECT_EQ(s->num_computed, s->len() - 1);
}

// Admission "reserve" (TensorRT-LLM's GUARANTEED_NO_EVICT) admits a sequence only when the free
// blocks cover the whole lifetime of every running sequence and of the new one: under a KV pool
// far too small for everyone, on-demand admission preempts, reserve never does, and both finish.
TEST(Scheduler, ReserveAdmissionNeverPreempts) {
  auto run = [](Admission adm, std::int64_t* max_running) {
    SchedulerConfig c;
    c.admission = adm;
    c.max_batched_tokens = 512;
    Fixture f(c, 64);                                                // 1024 token slots
    for (int i = 0; i < 12; ++i) f.add(100 + 10 * i, 200 + 20 * i);  // 300..740 tokens each
    std::int64_t finished = 0, steps = 0;
    *max_running = 0;
    while (f.sched.has_work() && steps < 100000) {
      finished += std::int64_t(f.step().size());
      *max_running = std::max<std::int64_t>(*max_running, std::int64_t(f.sched.running().size()));
      std::vector<const Sequence*> live;
      for (const auto& s : f.seqs)
        if (!s->block_table.empty()) live.push_back(s.get());
      f.bm.check_invariants(live);
      ++steps;
    }
    EXPECT_EQ(finished, 12) << admission_name(adm);
    return f.sched.num_preemptions();
  };
  std::int64_t run_od = 0, run_res = 0;
  EXPECT_GT(run(Admission::OnDemand, &run_od), 0) << "the pool is too small: on-demand admission preempts";
  EXPECT_EQ(run(Admission::Reserve, &run_res), 0);
  EXPECT_LT(run_res, run_od) << "reserving whole lifetimes admits fewer sequences at once";
  EXPECT_GE(run_res, 1);
}

TEST(Scheduler, ReserveAdmissionCountsTheRunningSequencesFutureBlocks) {
  SchedulerConfig c;
  c.admission = Admission::Reserve;
  Fixture f(c, 40);              // 640 slots
  Sequence* a = f.add(64, 300);  // lifetime 364 tokens = 23 blocks
  Sequence* b = f.add(64, 300);  // would need 23 more: 46 > 40
  f.step();
  EXPECT_EQ(a->status, SeqStatus::Running);
  EXPECT_EQ(b->status, SeqStatus::Waiting) << "only 4 blocks are held now, but 23 are promised to a";
  EXPECT_EQ(a->block_table.size(), 4u) << "blocks are still allocated as the sequence grows";
}

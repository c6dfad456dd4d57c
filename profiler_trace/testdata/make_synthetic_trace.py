#!/usr/bin/env python3
"""Writes synthetic_llama_step.json: a small, hand-built torch.profiler (Kineto) trace of one AMP
training step of a 2-layer LLaMA-architecture model, shaped like the traces PyTorch 2.x exports
with record_shapes=True (format: pytorch/kineto libkineto/src/output_json.cpp). It exercises the
trace reader and the kernel classifier with known answers: every kernel's category, the GEMM
shapes and layouts PyTorch's autograd issues (forward x·Wᵀ "TN", input gradient dY·W "NN",
weight gradient (dYᵀ·X) "NT"), flash attention forward/backward, a fused and a decomposed RMSNorm,
casts, the cross-entropy loss and the fused AdamW step. Kernel times are synthetic (a FLOP and a
byte rate plus a launch floor), so the tests know them exactly.

    python3 profiler_trace/testdata/make_synthetic_trace.py   # rewrites the fixture (deterministic)
"""
import json
import os

B, S, H, HEADS, HD, FFN, V, LAYERS = 2, 128, 256, 4, 64, 512, 1024, 2
T = B * S
PID, MAIN, AUTOGRAD, STREAM = 4242, 4242, 4250, 7
SIZE = {"float": 4, "c10::BFloat16": 2, "long int": 8}


def numel(dims):
    n = 1
    for d in dims:
        n *= d
    return n


def contiguous(dims):
    st, acc = [], 1
    for d in reversed(dims):
        st.insert(0, acc)
        acc *= d
    return st


def t(dtype, dims, strides=None):
    return (dtype, dims, strides if strides is not None else contiguous(dims), "")


def scalar(value):
    return ("Scalar", [], [], value)


NONE = ("", [], [], "")


class Emu:
    def __init__(self):
        self.events = []
        self.cpu = {MAIN: 1000.0, AUTOGRAD: 1000.0}
        self.gpu = 1000.0
        self.ext = 100
        self.corr = 9000
        self.seq = 0
        self.tid = MAIN
        self.stack = []

    def _emit_cpu(self, cat, name, start, end, ext, inputs=None, seq=None, extra=None):
        args = {"External id": ext, "Record function id": 0, "Ev Idx": ext - 1}
        if inputs is not None:
            args["Input Dims"] = [i[1] for i in inputs]
            args["Input type"] = [i[0] for i in inputs]
            args["Input Strides"] = [i[2] for i in inputs]
            args["Concrete Inputs"] = [i[3] for i in inputs]
        if seq is not None:
            args["Sequence number"] = seq
            args["Fwd thread id"] = 0
        if extra:
            args.update(extra)
        self.events.append({"ph": "X", "cat": cat, "name": name, "pid": PID, "tid": self.tid,
                            "ts": round(start, 3), "dur": round(end - start, 3), "args": args})

    class _Op:
        def __init__(self, emu, cat, name, inputs, seq, extra):
            self.emu, self.cat, self.name, self.inputs, self.seq, self.extra = emu, cat, name, inputs, seq, extra

        def __enter__(self):
            e = self.emu
            e.ext += 1
            self.ext = e.ext
            self.start = e.cpu[e.tid]
            e.cpu[e.tid] += 1.5
            e.stack.append(self.ext)
            return self

        def __exit__(self, *a):
            e = self.emu
            e.cpu[e.tid] += 1.0
            e.stack.pop()
            e._emit_cpu(self.cat, self.name, self.start, e.cpu[e.tid], self.ext, self.inputs, self.seq, self.extra)

    def op(self, name, inputs=None, seq=None, cat="cpu_op", extra=None):
        return Emu._Op(self, cat, name, inputs, seq, extra)

    def kernel(self, name, us, cat="kernel"):
        """Launches GPU work of `us` microseconds from the innermost open op."""
        self.corr += 1
        call_ts = self.cpu[self.tid]
        call_dur = 4.0
        ext = self.stack[-1]
        self.events.append({"ph": "X", "cat": "cuda_runtime",
                            "name": "cudaMemcpyAsync" if cat == "gpu_memcpy" else "cudaLaunchKernel",
                            "pid": PID, "tid": self.tid, "ts": round(call_ts, 3), "dur": call_dur,
                            "args": {"External id": ext, "cbid": 211, "correlation": self.corr}})
        start = max(self.gpu, call_ts + call_dur + 1.0)
        args = {"External id": ext, "device": 0, "stream": STREAM, "correlation": self.corr}
        if cat == "kernel":
            args.update({"registers per thread": 64, "shared memory": 0, "grid": [132, 1, 1], "block": [256, 1, 1]})
        self.events.append({"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": STREAM,
                            "ts": round(start, 3), "dur": round(us, 3), "args": args})
        self.events.append({"ph": "s", "id": self.corr, "pid": PID, "tid": self.tid, "ts": round(call_ts, 3),
                            "cat": "ac2g", "name": "ac2g"})
        self.events.append({"ph": "f", "id": self.corr, "pid": 0, "tid": STREAM, "ts": round(start, 3),
                            "cat": "ac2g", "name": "ac2g", "bp": "e"})
        self.gpu = start + us
        self.cpu[self.tid] = call_ts + call_dur + 0.5

    def next_seq(self):
        self.seq += 1
        return self.seq


# Synthetic kernel times (µs): GEMMs at 400 TFLOP/s, memory-bound kernels at 3 TB/s, 2 µs floor.
def gemm_us(m, n, k, batch=1):
    return round(2.0 + 2.0 * m * n * k * batch / 400e12 * 1e6, 3)


def mem_us(nbytes):
    return round(2.0 + nbytes / 3e12 * 1e6, 3)


def attn_us(backward):
    f = 4 * B * HEADS * S * S * HD / 2
    return round(3.0 + (2.5 if backward else 1.0) * f / 300e12 * 1e6, 3)


BF, F32, I64 = "c10::BFloat16", "float", "long int"
GEMM_FWD = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
GEMM_NN = "nvjet_tst_128x64_64x8_1x2_h_bz_coopA_NNN"
GEMM_NT = "nvjet_tst_128x128_64x4_2x1_v_bz_coopA_NTN"
EW = "void at::native::vectorized_elementwise_kernel<4, at::native::{}, at::detail::Array<char*, 3> >(int, at::native::{}, at::detail::Array<char*, 3>)"
COPY = "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, ...)"
RMS_FWD = "void at::native::(anonymous namespace)::vectorized_rms_norm_kernel<float, float>(int, float, float const*, float const*, float*, float*)"
RMS_BWD = "void at::native::(anonymous namespace)::rms_norm_grad_input_kernel<float, float>(float const*, float const*, float const*, float const*, float*, int)"
REDUCE = "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4>)"


def linear(e, x_dims, out_f, in_f, x_type=BF, cast_weight=True, name=""):
    """aten::linear → (weight cast under autocast) → aten::t → aten::matmul → aten::mm (TN).
    Returns (seq, record) for the backward."""
    seq = e.next_seq()
    with e.op("aten::linear", [t(x_type, x_dims), t(F32, [out_f, in_f]), NONE], seq=seq):
        if cast_weight:
            with e.op("aten::to", [t(F32, [out_f, in_f]), scalar("15"), scalar("False"), scalar("False"), NONE]):
                with e.op("aten::_to_copy", [t(F32, [out_f, in_f]), scalar("15"), NONE, NONE, NONE, scalar("False"), NONE]):
                    with e.op("aten::copy_", [t(BF, [out_f, in_f]), t(F32, [out_f, in_f]), scalar("False")]):
                        e.kernel(COPY, mem_us(out_f * in_f * 6))
        with e.op("aten::t", [t(BF, [out_f, in_f])], seq=seq):
            pass
        with e.op("aten::matmul", [t(BF, x_dims), t(BF, [in_f, out_f], [1, in_f])], seq=seq):
            with e.op("aten::mm", [t(BF, [T, in_f]), t(BF, [in_f, out_f], [1, in_f])], seq=seq):
                e.kernel(GEMM_FWD, gemm_us(T, out_f, in_f))
    return ("linear", seq, out_f, in_f)


def rms_fused(e, dims):
    seq = e.next_seq()
    with e.op("aten::rms_norm", [t(F32, dims), ("ScalarList", [], [], "[%d]" % dims[-1]), t(F32, [dims[-1]]), scalar("1e-06")], seq=seq):
        with e.op("aten::_fused_rms_norm", [t(F32, dims), ("ScalarList", [], [], "[%d]" % dims[-1]), t(F32, [dims[-1]]), scalar("1e-06")], seq=seq):
            e.kernel(RMS_FWD, mem_us(numel(dims) * 8))
    return ("rms_fused", seq, dims)


def rms_decomposed(e, dims):
    """aten::rms_norm as its CompositeImplicit decomposition (pow, mean, add, rsqrt, mul, mul)."""
    seqs = []
    n = numel(dims)
    with e.op("aten::rms_norm", [t(BF, dims), ("ScalarList", [], [], "[%d]" % dims[-1]), t(BF, [dims[-1]]), scalar("1e-06")]):
        for name, ins, kname, nbytes in [
            ("aten::pow", [t(BF, dims), scalar("2")], EW.format("pow_tensor_scalar_kernel", "x"), n * 4),
            ("aten::mean", [t(BF, dims), ("ScalarList", [], [], "[-1]"), scalar("True"), NONE], REDUCE, n * 2),
            ("aten::add", [t(BF, dims[:-1] + [1]), scalar("1e-06"), scalar("1")], EW.format("AUnaryFunctor", "x"), n // dims[-1] * 4),
            ("aten::rsqrt", [t(BF, dims[:-1] + [1])], EW.format("rsqrt_kernel_cuda", "x"), n // dims[-1] * 4),
            ("aten::mul", [t(BF, dims), t(BF, dims[:-1] + [1])], EW.format("BinaryFunctor", "x"), n * 4),
            ("aten::mul", [t(BF, [dims[-1]]), t(BF, dims)], EW.format("BinaryFunctor", "x"), n * 4),
        ]:
            s = e.next_seq()
            seqs.append((s, name, ins))
            with e.op(name, ins, seq=s):
                e.kernel(kname, mem_us(nbytes))
    return ("rms_decomposed", seqs, dims)


def attention(e):
    q = [B, HEADS, S, HD]
    seq = e.next_seq()
    ins = [t(BF, q), t(BF, q), t(BF, q), NONE, scalar("0."), scalar("True"), NONE, scalar("False")]
    with e.op("aten::scaled_dot_product_attention", ins, seq=seq):
        with e.op("aten::_scaled_dot_product_flash_attention",
                  [t(BF, q), t(BF, q), t(BF, q), scalar("0."), scalar("True"), scalar("False"), NONE], seq=seq):
            with e.op("aten::_flash_attention_forward", [t(BF, [B, S, HEADS, HD])] * 3):
                e.kernel("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)", attn_us(False))
    return ("sdpa", seq)


def elementwise(e, name, ins, kname, nbytes):
    s = e.next_seq()
    with e.op(name, ins, seq=s):
        e.kernel(kname, mem_us(nbytes))
    return ("ew", s, name, ins)


def node(e, node_name, seq, body):
    with e.op("autograd::engine::evaluate_function: " + node_name, []):
        with e.op(node_name, [], seq=seq):
            body()


def backward_linear(e, rec):
    _, seq, out_f, in_f = rec

    def body():
        with e.op("aten::mm", [t(BF, [T, out_f]), t(BF, [out_f, in_f])]):
            e.kernel(GEMM_NN, gemm_us(T, in_f, out_f))
        with e.op("aten::t", [t(BF, [T, out_f])]):
            pass
        with e.op("aten::mm", [t(BF, [out_f, T], [1, out_f]), t(BF, [T, in_f])]):
            e.kernel(GEMM_NT, gemm_us(out_f, in_f, T))
    node(e, "MmBackward0", seq, body)
    # Weight gradient back to the fp32 parameter's dtype (autocast's cast backward).
    def cast_back():
        with e.op("aten::to", [t(BF, [out_f, in_f]), scalar("6")]):
            with e.op("aten::_to_copy", [t(BF, [out_f, in_f]), scalar("6")]):
                with e.op("aten::copy_", [t(F32, [out_f, in_f]), t(BF, [out_f, in_f]), scalar("False")]):
                    e.kernel(COPY, mem_us(out_f * in_f * 6))
    node(e, "ToCopyBackward0", seq, cast_back)


def main():
    e = Emu()
    trace_events = [
        {"name": "process_name", "ph": "M", "ts": 1000.0, "pid": PID, "tid": 0, "args": {"name": "python3"}},
        {"name": "thread_name", "ph": "M", "ts": 1000.0, "pid": 0, "tid": STREAM, "args": {"name": "stream 7"}},
    ]
    e.ext += 1
    step_ext, step_start = e.ext, e.cpu[MAIN]
    e.cpu[MAIN] += 2
    e.stack.append(step_ext)
    x = [B, S, H]
    with e.op("aten::copy_", [t(I64, [B, S]), t(I64, [B, S]), scalar("True")]):
        e.kernel("Memcpy HtoD (Pageable -> Device)", 1.5, cat="gpu_memcpy")
    emb_seq = e.next_seq()
    with e.op("aten::embedding", [t(F32, [V, H]), t(I64, [B, S]), scalar("-1"), scalar("False"), scalar("False")], seq=emb_seq):
        with e.op("aten::index_select", [t(F32, [V, H]), scalar("0"), t(I64, [T])]):
            e.kernel("void at::native::(anonymous namespace)::indexSelectLargeIndex<float, long, unsigned int, 2, 2, -2, true>(...)", mem_us(T * H * 8))
    recs = []
    for _ in range(LAYERS):
        layer = []
        layer.append(rms_fused(e, x))
        layer.append(linear(e, x, 3 * H, H))
        layer.append(attention(e))
        layer.append(linear(e, x, H, H))
        layer.append(elementwise(e, "aten::add", [t(F32, x), t(BF, x), scalar("1")], EW.format("CUDAFunctor_add<float>", "x"), T * H * 10))
        layer.append(rms_fused(e, x))
        layer.append(linear(e, x, 2 * FFN, H))
        layer.append(elementwise(e, "aten::silu", [t(BF, [B, S, FFN])], EW.format("silu_kernel", "x"), T * FFN * 4))
        layer.append(elementwise(e, "aten::mul", [t(BF, [B, S, FFN]), t(BF, [B, S, FFN])], EW.format("BinaryFunctor", "x"), T * FFN * 6))
        layer.append(linear(e, [B, S, FFN], H, FFN))
        layer.append(elementwise(e, "aten::add", [t(F32, x), t(BF, x), scalar("1")], EW.format("CUDAFunctor_add<float>", "x"), T * H * 10))
        recs.append(layer)
    final = rms_decomposed(e, [B, S, H])
    head = linear(e, x, V, H)
    # Loss in fp32: logits cast, log-softmax + nll (cross_entropy_loss composite).
    with e.op("aten::to", [t(BF, [B, S, V]), scalar("6")]):
        with e.op("aten::_to_copy", [t(BF, [B, S, V]), scalar("6")]):
            with e.op("aten::copy_", [t(F32, [B, S, V]), t(BF, [B, S, V]), scalar("False")]):
                e.kernel(COPY, mem_us(T * V * 6))
    ce_seq = e.next_seq()
    with e.op("aten::cross_entropy_loss", [t(F32, [T, V]), t(I64, [T]), NONE, scalar("1"), scalar("-100"), scalar("0.")]):
        with e.op("aten::log_softmax", [t(F32, [T, V]), scalar("1"), NONE]):
            with e.op("aten::_log_softmax", [t(F32, [T, V]), scalar("1"), scalar("False")], seq=ce_seq):
                e.kernel("void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*, float const*, int)", mem_us(T * V * 8))
        nll_seq = e.next_seq()
        with e.op("aten::nll_loss_nd", [t(F32, [T, V]), t(I64, [T]), NONE, scalar("1"), scalar("-100")]):
            with e.op("aten::nll_loss", [t(F32, [T, V]), t(I64, [T]), NONE, scalar("1"), scalar("-100")]):
                with e.op("aten::nll_loss_forward", [t(F32, [T, V]), t(I64, [T]), NONE, scalar("1"), scalar("-100")], seq=nll_seq):
                    e.kernel("void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<float, float, long>(float*, float*, float const*, long const*, float const*, bool, long, long, long, long)", 4.0)

    # Backward on the autograd thread.
    bwd_start = e.cpu[MAIN]
    with e.op("autograd::engine::evaluate_function: torch::autograd::GraphRoot", []):
        pass
    e.cpu[MAIN] += 1
    e.tid = AUTOGRAD
    e.cpu[AUTOGRAD] = max(e.cpu[AUTOGRAD], bwd_start + 5)
    saved = e.stack
    e.stack = []

    def nll_bwd():
        with e.op("aten::nll_loss_backward", [t(F32, []), t(F32, [T, V]), t(I64, [T]), NONE, scalar("1"), scalar("-100"), t(F32, [])]):
            with e.op("aten::zero_", [t(F32, [T, V])]):
                with e.op("aten::fill_", [t(F32, [T, V]), scalar("0")]):
                    e.kernel(EW.format("FillFunctor<float>", "x"), mem_us(T * V * 4))
            e.kernel("void at::native::(anonymous namespace)::nll_loss_backward_reduce_cuda_kernel_2d<float, long>(...)", 3.0)
    node(e, "NllLossBackward0", nll_seq, nll_bwd)

    def lsm_bwd():
        with e.op("aten::_log_softmax_backward_data", [t(F32, [T, V]), t(F32, [T, V]), scalar("1"), scalar("6")]):
            e.kernel("void at::native::(anonymous namespace)::cunn_SoftMaxBackward<4, float, float, float, at::native::(anonymous namespace)::LogSoftMaxBackwardEpilogue>(...)", mem_us(T * V * 12))
    node(e, "LogSoftmaxBackward0", ce_seq, lsm_bwd)

    def cast_logits_back():
        with e.op("aten::to", [t(F32, [B, S, V]), scalar("15")]):
            with e.op("aten::_to_copy", [t(F32, [B, S, V]), scalar("15")]):
                with e.op("aten::copy_", [t(BF, [B, S, V]), t(F32, [B, S, V]), scalar("False")]):
                    e.kernel(COPY, mem_us(T * V * 6))
    node(e, "ToCopyBackward0", e.next_seq(), cast_logits_back)
    backward_linear(e, head)
    # Decomposed final norm's backward: one node per primitive, tied by sequence number.
    for s, name, ins in reversed(final[1]):
        prim = name.split("::")[1]
        if prim == "add":
            node(e, "AddBackward0", s, lambda: None)
            continue
        node_name = {"pow": "PowBackward0", "mean": "MeanBackward1", "rsqrt": "RsqrtBackward0", "mul": "MulBackward0"}[prim]

        def body(ins=ins, prim=prim):
            with e.op("aten::mul", [t(BF, [B, S, H]), t(BF, [B, S, H])]):
                e.kernel(EW.format("BinaryFunctor", "x"), mem_us(T * H * 6))
        node(e, node_name, s, body)
    for layer in reversed(recs):
        for rec in reversed(layer):
            kind = rec[0]
            if kind == "linear":
                backward_linear(e, rec)
            elif kind == "rms_fused":
                dims = rec[2]

                def body(dims=dims):
                    with e.op("aten::_fused_rms_norm_backward", [t(F32, dims), t(F32, dims), ("ScalarList", [], [], "[%d]" % dims[-1]), t(F32, [T, 1]), t(F32, [dims[-1]]), ("ScalarList", [], [], "[True, True]")]):
                        e.kernel(RMS_BWD, mem_us(numel(dims) * 12))
                        e.kernel(REDUCE, mem_us(numel(dims) * 4))
                node(e, "FusedRmsNormBackward0", rec[1], body)
            elif kind == "sdpa":
                q = [B, HEADS, S, HD]

                def body(q=q):
                    with e.op("aten::_scaled_dot_product_flash_attention_backward",
                              [t(BF, q), t(BF, q), t(BF, q), t(BF, q), t(BF, q), t(F32, [B, HEADS, S]), NONE, NONE,
                               scalar(str(S)), scalar(str(S)), scalar("0."), scalar("True"), t(I64, []), t(I64, []), NONE]):
                        with e.op("aten::_flash_attention_backward", [t(BF, [B, S, HEADS, HD])] * 4):
                            e.kernel("void pytorch_flash::flash_bwd_dot_do_o_kernel<true, Flash_bwd_kernel_traits<64, 128, 128, 8, 4, 2, 4, false, false, cutlass::bfloat16_t> >(pytorch_flash::Flash_bwd_params)", 3.0)
                            e.kernel("void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<64, 128, 128, 8, 4, 2, 4, false, false, cutlass::bfloat16_t>, false, true, false, false, false, true, false, false>(pytorch_flash::Flash_bwd_params)", attn_us(True))
                            e.kernel("void pytorch_flash::flash_bwd_convert_dq_kernel<Flash_bwd_kernel_traits<64, 128, 128, 8, 4, 2, 4, false, false, cutlass::bfloat16_t> >(pytorch_flash::Flash_bwd_params, int)", 2.5)
                node(e, "ScaledDotProductFlashAttentionBackward0", rec[1], body)
            elif kind == "ew":
                _, s, name, ins = rec
                if name == "aten::add":
                    node(e, "AddBackward0", s, lambda: None)
                elif name == "aten::silu":
                    def body():
                        with e.op("aten::silu_backward", [t(BF, [B, S, FFN]), t(BF, [B, S, FFN])]):
                            e.kernel(EW.format("silu_backward_kernel", "x"), mem_us(T * FFN * 6))
                    node(e, "SiluBackward0", s, body)
                elif name == "aten::mul":
                    def body():
                        for _ in range(2):
                            with e.op("aten::mul", [t(BF, [B, S, FFN]), t(BF, [B, S, FFN])]):
                                e.kernel(EW.format("BinaryFunctor", "x"), mem_us(T * FFN * 6))
                    node(e, "MulBackward0", s, body)

    def emb_bwd():
        with e.op("aten::embedding_backward", [t(F32, [B, S, H]), t(I64, [B, S]), scalar(str(V)), scalar("-1"), scalar("False"), scalar("False")]):
            with e.op("aten::embedding_dense_backward", [t(F32, [B, S, H]), t(I64, [B, S]), scalar(str(V)), scalar("-1"), scalar("False")]):
                e.kernel("void at::native::(anonymous namespace)::embedding_backward_feature_kernel<float, float, long>(...)", mem_us(T * H * 8))
    node(e, "EmbeddingBackward0", emb_seq, emb_bwd)
    e.stack = saved
    e.tid = MAIN
    e.cpu[MAIN] = max(e.cpu[MAIN], e.cpu[AUTOGRAD]) + 5

    # Optimizer: fused AdamW over every parameter tensor.
    shapes = [[V, H]]
    for _ in range(LAYERS):
        shapes += [[H], [3 * H, H], [H, H], [H], [2 * FFN, H], [H, FFN]]
    shapes += [[H], [V, H]]
    params = sum(numel(s) for s in shapes)
    with e.op("Optimizer.step#AdamW.step", None, cat="user_annotation"):
        lst = ("TensorList", shapes, [contiguous(s) for s in shapes], "")
        steps = ("TensorList", [[] for _ in shapes], [[] for _ in shapes], "")
        with e.op("aten::_fused_adamw_", [lst, lst, lst, lst, ("TensorList", [], [], ""), steps, scalar("0.001"),
                                          scalar("0.9"), scalar("0.999"), scalar("0.01"), scalar("1e-08"),
                                          scalar("False"), scalar("False"), NONE, NONE]):
            fused = "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, float*, double, double, double, double, double, bool, float*, float*>(...)"
            e.kernel(fused, mem_us(params * 16 * 2) / 2)
            e.kernel(fused, mem_us(params * 16 * 2) / 2)
    e.stack.pop()
    step_end = max(e.cpu[MAIN], e.gpu) + 20
    e.events.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": PID, "tid": MAIN,
                     "ts": round(step_start, 3), "dur": round(step_end - step_start, 3),
                     "args": {"External id": step_ext, "Record function id": 0, "Ev Idx": step_ext - 1}})
    e.events.append({"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#3", "pid": 0, "tid": STREAM,
                     "ts": round(step_start + 5, 3), "dur": round(e.gpu - step_start - 5, 3),
                     "args": {"External id": step_ext}})
    e.events.append({"ph": "X", "cat": "python_function", "name": "torch/nn/modules/module.py(1750): _call_impl",
                     "pid": PID, "tid": MAIN, "ts": round(step_start + 1, 3), "dur": 10.0,
                     "args": {"Python parent id": 1, "Python id": 2}})
    e.events.append({"name": "Iteration Start: PyTorch Profiler", "ph": "i", "s": "g", "pid": "Traces",
                     "tid": "Trace PyTorch Profiler", "ts": round(step_start, 3)})
    e.events.append({"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": round(step_end + 1, 3)})
    trace = {
        "schemaVersion": 1,
        "deviceProperties": [{"id": 0, "name": "NVIDIA H200", "totalGlobalMem": 143771 * 1024 * 1024,
                              "computeMajor": 9, "computeMinor": 0, "maxThreadsPerBlock": 1024,
                              "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536, "warpSize": 32,
                              "sharedMemPerBlock": 49152, "numSms": 132, "regsPerMultiprocessor": 65536,
                              "sharedMemPerBlockOptin": 232448, "sharedMemPerMultiprocessor": 233472}],
        "cupti_version": 26,
        "cuda_runtime_version": 13000,
        "record_shapes": 1,
        "cuda_driver_version": 13000,
        "displayTimeUnit": "ms",
        "baseTimeNanoseconds": 1764400000000000000,
        "traceEvents": trace_events + e.events,
        "traceName": "synthetic_llama_step.json",
    }
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "synthetic_llama_step.json")
    with open(out, "w") as f:
        json.dump(trace, f, indent=None, separators=(",", ":"))
        f.write("\n")
    print(out, len(e.events), "events", "params", params)


if __name__ == "__main__":
    main()

#pragma once
// A PyTorch profiler trace: the Chrome-trace JSON that torch.profiler exports through Kineto
// (`prof.export_chrome_trace(path)`, or tensorboard_trace_handler's *.pt.trace.json[.gz]), read
// into plain events. What is kept: CPU ops with the input shapes, dtypes and strides that
// record_shapes=True stores; user annotations (ProfilerStep#N, Optimizer.step#...); GPU kernels,
// memory copies and sets with their stream and the CPU op that launched them; CUDA runtime and
// driver calls; the ac2g flow events that tie a launch call to its kernel; the GPUs'
// deviceProperties. The format is the one libkineto's ChromeTraceLogger writes
// (pytorch/kineto libkineto/src/output_json.cpp): an object with "traceEvents" (a bare array of
// events, the other Chrome-trace form, is accepted too); "ts" and "dur" in microseconds.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/json_util.hpp"

namespace infraplan::ptrace {

/// What an event is, from its "cat" (and "ph" for flows).
enum class EventKind {
  CpuOp,           ///< "cpu_op": an ATen operator or autograd node on a host thread
  UserAnnotation,  ///< "user_annotation": record_function ranges (ProfilerStep#N, Optimizer.step#...)
  GpuAnnotation,   ///< "gpu_user_annotation": the same ranges projected on a GPU stream
  Kernel,          ///< "kernel": a GPU kernel
  Memcpy,          ///< "gpu_memcpy"
  Memset,          ///< "gpu_memset"
  Runtime,         ///< "cuda_runtime" / "cuda_driver": cudaLaunchKernel, cuLaunchKernelEx, ...
  FlowStart,       ///< "ac2g" flow, ph "s": at the launch call
  FlowEnd,         ///< "ac2g" flow, ph "f": at the kernel
};

/// One argument of a CPU op as record_shapes stores it: a tensor (one shape), a tensor list
/// (several), or a scalar / None (no shape).
struct OpInput {
  std::string type;  ///< "Input type": "float", "c10::BFloat16", "Scalar", "TensorList", "" (None) ...
  std::vector<std::vector<std::int64_t>> shapes;   ///< "Input Dims": one per tensor (empty: no tensor)
  std::vector<std::vector<std::int64_t>> strides;  ///< "Input Strides", same layout (may be empty)
  std::string concrete;  ///< "Concrete Inputs": the scalar's value as text ("True", "-1", ""), if any
  /// Elements of the tensor (or of all tensors of a list); 0 for a scalar.
  double elements() const;
};

struct TraceEvent {
  EventKind kind = EventKind::CpuOp;
  std::string name;
  std::int64_t pid = 0, tid = 0;  ///< host: process and thread; GPU: device and stream (strings interned < 0)
  double ts_us = 0, dur_us = 0;   ///< start and duration, microseconds
  double end_us() const { return ts_us + dur_us; }
  /// "External id": on CPU ops their own id; on kernels, copies and launch calls the id of the CPU
  /// op (or annotation) active on the launching thread. -1 when absent.
  std::int64_t external_id = -1;
  std::int64_t correlation = -1;  ///< "correlation": ties a kernel to its launch call; -1 when absent
  std::int64_t flow_id = -1;      ///< ac2g flow events: "id"
  std::int64_t sequence = -1;     ///< "Sequence number": a forward op and its autograd node share it
  std::vector<OpInput> inputs;    ///< CPU ops recorded with shapes
};

/// The GPU a trace ran on, as cudaGetDeviceProperties described it ("deviceProperties").
struct DeviceProperties {
  int id = 0;
  std::string name;  ///< e.g. "NVIDIA H200"
  double total_memory_bytes = 0;
  int compute_major = 0, compute_minor = 0;
  int sms = 0;  ///< "numSms"
};

struct KinetoTrace {
  std::string origin;              ///< file path, for messages
  std::vector<TraceEvent> events;  ///< the kinds above only, sorted by (ts, longest first)
  std::vector<DeviceProperties> devices;
  std::map<std::string, std::string> metadata;  ///< top-level scalars (cuda_runtime_version, ...), as text
  std::size_t events_read = 0;                  ///< traceEvents entries in the file, kept or not
};

/// Largest trace read (decompressed bytes): a trace of one step of a large model stays far below;
/// anything bigger is refused rather than exhausting memory.
constexpr std::size_t kMaxTraceBytes = std::size_t(2) << 30;

/// Reads a trace file, gzip'd (".gz" or the gzip magic) or plain. Throws infraplan::Error naming
/// the path: missing file, not gzip/JSON, larger than `max_bytes`, no "traceEvents".
KinetoTrace read_kineto_trace(const std::string& path, std::size_t max_bytes = kMaxTraceBytes);
/// Parses trace text (plain JSON).
KinetoTrace parse_kineto_trace(const std::string& text, const std::string& origin);
/// The bytes of a file, gunzipped when it is gzip data. Throws infraplan::Error.
std::string read_maybe_gzip(const std::string& path, std::size_t max_bytes);

/// Short dtype of a record_shapes type name: "f32", "bf16", "f16", "f64", "i64", "i32", "u8",
/// "bool", "fp8e4m3", "fp8e5m2"; "" for non-tensors and unknown names.
std::string short_dtype(const std::string& input_type);

}  // namespace infraplan::ptrace

#pragma once
// Board power, power limit, clocks and throttle reasons of one GPU through NVML, loaded from the
// driver's library at run time: no link-time dependency, so the tools that read it (the power
// probe of infraplan-calibrate, the held decode steps of infraplan-bench step) also run where
// NVML is missing, and then report no power.
namespace infraplan::calib {

class NvmlReader {
 public:
  /// Opens the NVML device of CUDA device `cuda_device` (matched by PCI bus id).
  explicit NvmlReader(int cuda_device);
  ~NvmlReader();
  NvmlReader(const NvmlReader&) = delete;
  NvmlReader& operator=(const NvmlReader&) = delete;

  /// False when NVML or the device could not be opened (every reading is then NaN or 0).
  bool ok() const { return dev_ != nullptr; }
  /// Board power (W); NaN when unreadable.
  double power_w() const { return read(power_, 1e-3); }
  /// Enforced board power limit (W); NaN when unreadable.
  double limit_w() const { return read(limit_, 1e-3); }
  /// Current and highest SM clock (MHz); NaN when unreadable.
  double sm_clock_mhz() const { return read_typed(clock_, 1); }
  double max_sm_clock_mhz() const { return read_typed(max_clock_, 1); }
  /// GPU temperature (°C); NaN when unreadable.
  double temperature_c() const { return read_typed(temp_, 0); }
  /// NVML's clock-event (throttle) reason bits; 0 when unreadable.
  unsigned long long clock_event_reasons() const;

 private:
  double read(int (*f)(void*, unsigned*), double scale) const;
  double read_typed(int (*f)(void*, int, unsigned*), int type) const;

  void* lib_ = nullptr;
  void* dev_ = nullptr;
  bool initialised_ = false;
  int (*power_)(void*, unsigned*) = nullptr;
  int (*limit_)(void*, unsigned*) = nullptr;
  int (*clock_)(void*, int, unsigned*) = nullptr;
  int (*max_clock_)(void*, int, unsigned*) = nullptr;
  int (*temp_)(void*, int, unsigned*) = nullptr;
  int (*reasons_)(void*, unsigned long long*) = nullptr;
  int (*shutdown_)() = nullptr;
};

}  // namespace infraplan::calib

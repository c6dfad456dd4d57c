#include "calib_kernels/nvml_reader.hpp"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cmath>

namespace infraplan::calib {

NvmlReader::NvmlReader(int cuda_device) {
  lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib_) return;
  auto sym = [&](const char* name) { return dlsym(lib_, name); };
  auto init = reinterpret_cast<int (*)()>(sym("nvmlInit_v2"));
  auto by_bus = reinterpret_cast<int (*)(const char*, void**)>(sym("nvmlDeviceGetHandleByPciBusId_v2"));
  power_ = reinterpret_cast<int (*)(void*, unsigned*)>(sym("nvmlDeviceGetPowerUsage"));
  limit_ = reinterpret_cast<int (*)(void*, unsigned*)>(sym("nvmlDeviceGetEnforcedPowerLimit"));
  clock_ = reinterpret_cast<int (*)(void*, int, unsigned*)>(sym("nvmlDeviceGetClockInfo"));
  max_clock_ = reinterpret_cast<int (*)(void*, int, unsigned*)>(sym("nvmlDeviceGetMaxClockInfo"));
  temp_ = reinterpret_cast<int (*)(void*, int, unsigned*)>(sym("nvmlDeviceGetTemperature"));
  reasons_ = reinterpret_cast<int (*)(void*, unsigned long long*)>(sym("nvmlDeviceGetCurrentClocksEventReasons"));
  if (!reasons_)
    reasons_ = reinterpret_cast<int (*)(void*, unsigned long long*)>(sym("nvmlDeviceGetCurrentClocksThrottleReasons"));
  shutdown_ = reinterpret_cast<int (*)()>(sym("nvmlShutdown"));
  char bus[64] = {};
  if (!init || !by_bus || !power_ || init() != 0) return;
  initialised_ = true;
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, cuda_device) != cudaSuccess || by_bus(bus, &dev_) != 0) dev_ = nullptr;
}

NvmlReader::~NvmlReader() {
  if (initialised_ && shutdown_) shutdown_();
  if (lib_) dlclose(lib_);
}

unsigned long long NvmlReader::clock_event_reasons() const {
  unsigned long long r = 0;
  return (ok() && reasons_ && reasons_(dev_, &r) == 0) ? r : 0;
}

double NvmlReader::read(int (*f)(void*, unsigned*), double scale) const {
  unsigned v = 0;
  return (ok() && f && f(dev_, &v) == 0) ? double(v) * scale : std::nan("");
}

double NvmlReader::read_typed(int (*f)(void*, int, unsigned*), int type) const {
  unsigned v = 0;
  return (ok() && f && f(dev_, type, &v) == 0) ? double(v) : std::nan("");
}

}  // namespace infraplan::calib

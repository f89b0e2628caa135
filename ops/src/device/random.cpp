// Random operators on the device (kernels/random.cu): uniform_, normal_, bernoulli_ with a
// probability, exponential_, random_ and dropout, which rand, randn, randint, rand_like, the
// initialisers of torch.nn.init, data augmentation and nn.Dropout reach. They draw from the CUDA
// generator the call names (or the device's default one) exactly as PyTorch's CUDA kernels do: the
// same Philox offset reserved from the generator under its lock, the same launch geometry from
// the device's properties, the same element order. So torch.manual_seed, torch.Generator("cuda"),
// get_rng_state / set_rng_state, fork_rng and CUDA graph captures behave as on an NVIDIA GPU, and
// a seed gives the numbers PyTorch's kernels give on a GPU of the same geometry (up to the last
// bits of the transcendental functions normal_ and exponential_ use).
//
// A call whose arguments PyTorch would refuse (a bound out of order, a negative std...) is not
// served: PyTorch's own operator then raises its error, before the generator moves.
#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/OpMathType.h>
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <ATen/core/Generator.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/core/DeviceGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <optional>

#include "../device_kernels.h"
#include "device.h"
#include "kernel_table.h"

namespace torchada::ops::device {
namespace {

// PyTorch's random kernels: 256 threads a block, as many blocks as the elements need up to
// what fills the device's multiprocessors once.
constexpr unsigned kBlock = 256;

unsigned grid_of(int64_t n) {
  const cudaDeviceProp* p = at::cuda::getCurrentDeviceProperties();
  const uint64_t resident = static_cast<uint64_t>(p->multiProcessorCount) *
                            static_cast<uint64_t>(p->maxThreadsPerMultiProcessor / kBlock);
  const uint64_t wanted = (static_cast<uint64_t>(n) + kBlock - 1) / kBlock;
  return static_cast<unsigned>(std::max<uint64_t>(1, std::min(resident, wanted)));
}

// Reserves `increment` Philox offsets from the generator, as PyTorch's kernels do (under its
// lock; inside a capture the state is the graph's seed and offset tensors).
random::Philox reserve(const std::optional<at::Generator>& g, uint64_t increment) {
  auto* gen = at::get_generator_or_default<at::CUDAGeneratorImpl>(
      g, at::cuda::detail::getDefaultCUDAGenerator());
  at::PhiloxCudaState s;
  {
    std::lock_guard<std::mutex> lock(gen->mutex_);
    s = gen->philox_cuda_state(increment);
  }
  random::Philox p;
  if (s.captured_) {
    p.captured = true;
    p.seed_ptr = s.seed_.ptr;
    p.offset_ptr = s.offset_.ptr;
    p.offset_intragraph = s.offset_intragraph_;
  } else {
    p.seed = s.seed_.val;
    p.offset = s.offset_.val;
  }
  return p;
}

// A tensor the fill kernel can write in TensorIterator's order: a dense CUDA tensor of a dtype
// the kernels store (its elements in memory order are the iterator's order), small enough for
// PyTorch's 32-bit indexing (larger ones split into several launches there).
bool fillable(const at::Tensor& t) {
  return t.defined() && t.is_cuda() && t.layout() == at::kStrided &&
         kind_of(t.scalar_type()).has_value() && t.is_non_overlapping_and_dense() &&
         t.numel() <= std::numeric_limits<int32_t>::max() && !t.is_conj() && !t.is_neg();
}

// Launches a fill of `self` and returns it.
at::Tensor& fill(at::Tensor& self, random::Fill f, const std::optional<at::Generator>& gen) {
  c10::OptionalDeviceGuard guard(at::device_of(self));
  f.n = self.numel();
  if (f.n == 0) return self;
  f.out = static_cast<char*>(self.data_ptr());
  f.kind = *kind_of(self.scalar_type());
  f.block = kBlock;
  f.grid = grid_of(f.n);
  const uint64_t unroll = f.wide ? 2 : 4;
  const uint64_t threads = static_cast<uint64_t>(f.grid) * f.block;
  // Philox outputs each thread spends, 4 offsets apiece (PyTorch's calc_execution_policy).
  f.philox = reserve(gen, ((static_cast<uint64_t>(f.n) - 1) / (threads * unroll) + 1) * 4);
  check_launch("random", TORCHADA_KERNEL(random_fill)(f, current_stream(self)));
  return self;
}

bool floating(const at::Tensor& t) {
  return t.scalar_type() == at::kFloat || t.scalar_type() == at::kDouble ||
         t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16;
}

// from, to and to - from as PyTorch's uniform kernel holds them: in the element type, the
// difference taken in the element type and widened to the compute type.
template <class T>
void uniform_bounds(double from, double to, random::Fill& f) {
  const T lo = static_cast<T>(from), hi = static_cast<T>(to);
  f.a = static_cast<double>(lo);
  f.b = static_cast<double>(hi);
  f.c = static_cast<double>(static_cast<at::opmath_type<T>>(static_cast<T>(hi - lo)));
}

at::Tensor& uniform_(at::Tensor& self, double from, double to, std::optional<at::Generator> gen) {
  if (!fillable(self) || !floating(self) || !(from <= to) || !std::isfinite(from) ||
      !std::isfinite(to))
    throw NotServed();
  random::Fill f;
  f.draw = random::Draw::kUniform;
  f.wide = self.scalar_type() == at::kDouble;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, self.scalar_type(), "uniform_",
                                  [&] { uniform_bounds<scalar_t>(from, to, f); });
  if (!std::isfinite(f.c)) throw NotServed();  // PyTorch's range check raises
  return fill(self, f, gen);
}

at::Tensor& normal_(at::Tensor& self, double mean, double std, std::optional<at::Generator> gen) {
  if (!fillable(self) || !floating(self) || !(std >= 0.0)) throw NotServed();
  random::Fill f;
  f.draw = random::Draw::kNormal;
  f.wide = self.scalar_type() == at::kDouble;
  f.a = mean;
  f.b = std;
  return fill(self, f, gen);
}

// normal with tensor arguments, as PyTorch composes it: a standard (or std-scaled) fill of a
// contiguous result, then std and mean applied.
void check_std_tensor(const at::Tensor& std) {
  TORCH_CHECK(std.numel() == 0 || std.min().ge(0).item<bool>(),
              "normal expects all elements of std >= 0.0");
}

at::Tensor normal_tensor_float(const at::Tensor& mean, double std,
                               std::optional<at::Generator> gen) {
  if (!floating_cuda(mean) || !(std >= 0.0)) throw NotServed();
  c10::OptionalDeviceGuard guard(at::device_of(mean));
  at::Tensor out = at::empty_like(mean, at::MemoryFormat::Contiguous);
  normal_(out, 0, std, gen);
  return out.add_(mean);
}

at::Tensor normal_float_tensor(double mean, const at::Tensor& std,
                               std::optional<at::Generator> gen) {
  if (!floating_cuda(std)) throw NotServed();
  c10::OptionalDeviceGuard guard(at::device_of(std));
  check_std_tensor(std);
  at::Tensor out = at::empty_like(std, at::MemoryFormat::Contiguous);
  normal_(out, 0, 1, gen);
  return out.mul_(std).add_(mean);
}

at::Tensor normal_tensor_tensor(const at::Tensor& mean, const at::Tensor& std,
                                std::optional<at::Generator> gen) {
  if (!floating_cuda(mean) || !floating_cuda(std) || mean.device() != std.device())
    throw NotServed();
  c10::OptionalDeviceGuard guard(at::device_of(mean));
  check_std_tensor(std);
  at::Tensor out = at::empty(at::infer_size(mean.sizes(), std.sizes()), mean.options());
  normal_(out, 0, 1, gen);
  return out.mul_(std).add_(mean);
}

at::Tensor& bernoulli_(at::Tensor& self, double p, std::optional<at::Generator> gen) {
  if (!fillable(self) || !(p >= 0.0 && p <= 1.0)) throw NotServed();
  random::Fill f;
  f.draw = random::Draw::kBernoulli;
  f.wide = self.scalar_type() == at::kDouble;  // float draws for every other dtype
  f.a = p;
  return fill(self, f, gen);
}

at::Tensor& exponential_(at::Tensor& self, double lambda, std::optional<at::Generator> gen) {
  if (!fillable(self) || !floating(self) || !(lambda > 0.0) || !std::isfinite(lambda))
    throw NotServed();
  random::Fill f;
  f.draw = random::Draw::kExponential;
  f.wide = self.scalar_type() == at::kDouble;
  f.a = lambda;
  return fill(self, f, gen);
}

// The range of random_ without bounds: [0, 2^digits] for floating dtypes' exact integers, [0, max]
// for integral ones, {0, 1} for bool.
std::optional<uint64_t> full_range(at::ScalarType t) {
  switch (t) {
    case at::kBool:
      return 2;
    case at::kByte:
      return uint64_t{1} << 8;
    case at::kChar:
      return uint64_t{1} << 7;
    case at::kShort:
      return uint64_t{1} << 15;
    case at::kInt:
      return uint64_t{1} << 31;
    case at::kLong:
      return uint64_t{1} << 63;
    case at::kHalf:
      return (uint64_t{1} << 11) + 1;
    case at::kBFloat16:
      return (uint64_t{1} << 8) + 1;
    case at::kFloat:
      return (uint64_t{1} << 24) + 1;
    case at::kDouble:
      return (uint64_t{1} << 53) + 1;
    default:
      return std::nullopt;
  }
}

at::Tensor& random_(at::Tensor& self, std::optional<at::Generator> gen) {
  const auto range = fillable(self) ? full_range(self.scalar_type()) : std::nullopt;
  if (!range) throw NotServed();
  random::Fill f;
  // 64-bit draws for int64 and double, two to a Philox output; 32-bit ones otherwise.
  f.wide = self.scalar_type() == at::kLong || self.scalar_type() == at::kDouble;
  f.draw = f.wide ? random::Draw::kRandom64 : random::Draw::kRandom32;
  f.range = *range;
  return fill(self, f, gen);
}

// [from, to) of an integral dtype: served when PyTorch would accept the bounds (both within
// the dtype); anything else is PyTorch's own error.
at::Tensor& random_between(at::Tensor& self, int64_t from, int64_t to,
                           const std::optional<at::Generator>& gen) {
  if (!fillable(self) || !at::isIntegralType(self.scalar_type(), /*includeBool=*/false) ||
      from >= to)
    throw NotServed();
  bool inside = false;
  AT_DISPATCH_INTEGRAL_TYPES(self.scalar_type(), "random_", [&] {
    inside = from >= static_cast<int64_t>(std::numeric_limits<scalar_t>::lowest()) &&
             to - 1 <= static_cast<int64_t>(std::numeric_limits<scalar_t>::max());
  });
  if (!inside) throw NotServed();
  random::Fill f;
  f.range = static_cast<uint64_t>(to) - static_cast<uint64_t>(from);
  f.base = from;
  // PyTorch's kernel takes 64-bit draws from a range of 2^28 on (so % skews it by < 5%).
  f.wide = f.range >= (uint64_t{1} << 28);
  f.draw = f.wide ? random::Draw::kRandom64 : random::Draw::kRandom32;
  return fill(self, f, gen);
}

at::Tensor& random_from(at::Tensor& self, int64_t from, std::optional<int64_t> to,
                        std::optional<at::Generator> gen) {
  if (!to) throw NotServed();  // the dtype's whole range from `from`: PyTorch's kernel
  return random_between(self, from, *to, gen);
}

at::Tensor& random_to(at::Tensor& self, int64_t to, std::optional<at::Generator> gen) {
  return random_between(self, 0, to, gen);
}

// ---- dropout ----------------------------------------------------------------------------------

// PyTorch's vector width for dropout: elements a thread takes at once, from the input's
// alignment, at most 16 bytes, dividing the element count; 1 for a tensor that is not dense.
int dropout_vector(const at::Tensor& self) {
  if (!self.is_non_overlapping_and_dense()) return 1;
  const auto address = reinterpret_cast<uintptr_t>(self.const_data_ptr());
  const auto size = static_cast<uintptr_t>(self.element_size());
  int vec = address % (8 * size) == 0   ? 8
            : address % (4 * size) == 0 ? 4
            : address % (2 * size) == 0 ? 2
                                        : 1;
  vec = std::min(vec, static_cast<int>(16 / size));
  while (vec > 1 && self.numel() % vec != 0) vec /= 2;
  return vec;
}

std::tuple<at::Tensor, at::Tensor> dropout(const at::Tensor& input, double p,
                                           std::optional<bool> train) {
  if (!floating_cuda(input)) throw NotServed();
  c10::OptionalDeviceGuard guard(at::device_of(input));
  const auto bool_options = input.options().dtype(at::kBool);
  if (train.has_value() && !*train) return {input.clone(), at::ones_like(input, bool_options)};
  if (p == 1) return {at::zeros_like(input), at::zeros_like(input, bool_options)};
  if (input.numel() > std::numeric_limits<int32_t>::max()) throw NotServed();
  at::Tensor mask = at::empty_like(input, bool_options);
  if (input.numel() == 0) return {input.clone(), mask};
  at::Tensor out = at::empty_like(input);

  random::Dropout d;
  d.n = input.numel();
  d.kind = *kind_of(input.scalar_type());
  const double keep = 1.0 - p;
  if (input.scalar_type() == at::kDouble) {
    d.keep = keep;
    d.scale = 1.0 / keep;
  } else {  // float accumulation: keep rounded to float, 1 / keep computed in double, rounded
    const float k = static_cast<float>(keep);
    d.keep = k;
    d.scale = static_cast<float>(1.0 / static_cast<double>(k));
  }
  d.vec = dropout_vector(input);
  d.block = kBlock;
  d.grid = grid_of(d.n);
  const uint64_t threads = static_cast<uint64_t>(d.grid) * d.block;
  d.philox = reserve(std::nullopt, ((static_cast<uint64_t>(d.n) - 1) / (threads * 4) + 1) * 4);

  // Vectors walk the (dense) memory of input, out and mask alike; width 1 walks the elements in
  // their logical order, which contiguous copies make memory order.
  const bool direct = d.vec > 1 || (input.is_contiguous() && out.is_contiguous());
  const at::Tensor in = direct ? input : input.contiguous();
  at::Tensor out_c = direct ? out : at::empty(input.sizes(), input.options());
  at::Tensor mask_c = direct ? mask : at::empty(input.sizes(), bool_options);
  d.in = static_cast<const char*>(in.const_data_ptr());
  d.out = static_cast<char*>(out_c.data_ptr());
  d.mask = mask_c.data_ptr<bool>();
  check_launch("dropout", TORCHADA_KERNEL(dropout)(d, current_stream(input)));
  if (!direct) {
    out.copy_(out_c);
    mask.copy_(mask_c);
  }
  return {out, mask};
}

}  // namespace

std::vector<Kernel> random_kernels() {
  std::vector<Kernel> v;
  v.push_back(kernel<&uniform_>("aten::uniform_"));
  v.push_back(kernel<&normal_>("aten::normal_"));
  v.push_back(kernel<&normal_tensor_float>("aten::normal.Tensor_float"));
  v.push_back(kernel<&normal_float_tensor>("aten::normal.float_Tensor"));
  v.push_back(kernel<&normal_tensor_tensor>("aten::normal.Tensor_Tensor"));
  v.push_back(kernel<&bernoulli_>("aten::bernoulli_.float"));
  v.push_back(kernel<&exponential_>("aten::exponential_"));
  v.push_back(kernel<&random_>("aten::random_"));
  v.push_back(kernel<&random_from>("aten::random_.from"));
  v.push_back(kernel<&random_to>("aten::random_.to"));
  v.push_back(kernel<&dropout>("aten::native_dropout"));
  return v;
}

}  // namespace torchada::ops::device

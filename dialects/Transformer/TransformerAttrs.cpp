//===- TransformerAttrs.cpp - #transformer.rope_scaling -------------------===//
#include "accel/dialects/Transformer/TransformerDialect.h"

using namespace mlir;
using namespace accel::transformer;

//===----------------------------------------------------------------------===//
// RopeScalingAttr
//===----------------------------------------------------------------------===//

LogicalResult RopeScalingAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, RopeScalingKind kind,
    APFloat factor, std::optional<int64_t> originalMaxPosition,
    std::optional<APFloat> lowFreqFactor, std::optional<APFloat> highFreqFactor,
    std::optional<APFloat> betaFast, std::optional<APFloat> betaSlow) {
  StringRef name = stringifyRopeScalingKind(kind);
  if (!(factor.convertToDouble() > 0.0))
    return emitError() << "rope_scaling factor must be positive";
  if (originalMaxPosition && *originalMaxPosition <= 0)
    return emitError() << "rope_scaling original_max_position must be positive";
  if (kind == RopeScalingKind::Linear && originalMaxPosition)
    return emitError() << "linear rope_scaling takes no original_max_position";
  if (kind != RopeScalingKind::Linear && !originalMaxPosition)
    return emitError() << name << " rope_scaling needs original_max_position";

  bool isLlama3 = kind == RopeScalingKind::Llama3;
  if (!isLlama3 && (lowFreqFactor || highFreqFactor))
    return emitError()
           << "low_freq_factor and high_freq_factor only apply to llama3 "
              "rope_scaling";
  if (isLlama3) {
    if (!lowFreqFactor || !highFreqFactor)
      return emitError()
             << "llama3 rope_scaling needs low_freq_factor and high_freq_factor";
    double low = lowFreqFactor->convertToDouble();
    double high = highFreqFactor->convertToDouble();
    if (!(low > 0.0) || !(high > low))
      return emitError() << "llama3 rope_scaling needs 0 < low_freq_factor < "
                            "high_freq_factor";
  }
  if (kind != RopeScalingKind::Yarn && (betaFast || betaSlow))
    return emitError() << "beta_fast and beta_slow only apply to yarn rope_scaling";
  return success();
}

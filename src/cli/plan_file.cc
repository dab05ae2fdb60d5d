#include "cli/plan_file.h"

#include "hexplan/core/file_util.h"
#include "hexplan/plan/plan_json.h"
#include "hexplan/plan/plan_match.h"
#include "hexplan/plan/validator.h"

namespace hx::cli {
namespace {

// A mismatch is refused unless the user named that input (--model, --cluster): then a warning.
Status CheckFingerprints(const PlanFileArgs& args, const plan::PlanHeader& header,
                         const PlanningInputs& inputs, const std::string& model_spec,
                         const std::string& cluster_spec) {
  for (const plan::PlanMismatch& m :
       plan::FindPlanMismatches(header, *inputs.graph, *inputs.cluster,
                                {.model_overridden = !args.model.empty(),
                                .cluster_overridden = !args.cluster.empty()})) {
    const std::string& spec = m.input == plan::PlanInput::kModel ? model_spec : cluster_spec;
    const std::string msg = args.path + ": the plan was made for a different " +
                            plan::PlanInputName(m.input) + " than '" + spec +
                            "' builds (fingerprint mismatch)";
    if (!m.tolerated) return InvalidArgument(msg);
    LogTo(&CliLogger(), LogLevel::kWarning, msg);
  }
  return Status::Ok();
}

}  // namespace

StatusOr<LoadedPlan> LoadPlanFile(const PlanFileArgs& args) {
  HX_ASSIGN_OR_RETURN(std::string text, ReadFileToString(args.path));
  HX_ASSIGN_OR_RETURN(plan::PlanHeader header, plan::ParsePlanHeader(text, args.path));
  const std::string model_spec = args.model.empty() ? header.model.spec : args.model;
  const std::string cluster_spec = args.cluster.empty() ? header.cluster.spec : args.cluster;
  auto inputs = LoadPlanningInputs(model_spec, header.model.options, cluster_spec, args.profile);
  if (!inputs.ok()) return inputs.status().WithContext(args.path);
  LoadedPlan loaded;
  loaded.inputs = std::move(inputs).value();
  HX_RETURN_IF_ERROR(CheckFingerprints(args, header, loaded.inputs, model_spec, cluster_spec));
  HX_ASSIGN_OR_RETURN(
      loaded.plan, plan::ParsePlan(text, args.path, *loaded.inputs.graph, *loaded.inputs.cluster));
  HX_RETURN_IF_ERROR(plan::CheckPlan(loaded.plan, *loaded.inputs.cost, args.path));
  return loaded;
}

}  // namespace hx::cli

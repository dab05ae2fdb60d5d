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

// "batch 1, seq 128, fp32" (and the image and lstm sizes when set): what the plan was made with.
std::string OptionsText(const graph::ZooOptions& o) {
  std::string text = "batch " + std::to_string(o.batch) + ", seq " + std::to_string(o.seq) + ", " +
                     graph::DTypeName(o.dtype);
  if (o.image_size > 0) text += ", image " + std::to_string(o.image_size);
  if (o.lstm_layers > 0) text += ", layers " + std::to_string(o.lstm_layers);
  if (o.lstm_io > 0) text += ", io " + std::to_string(o.lstm_io);
  if (o.separate_batchnorm) text += ", batchnorm separate";
  return text;
}

}  // namespace

std::string PlanSpecToLoad(const std::string& plan_path, const std::string& stored,
                           plan::PlanInput input) {
  const plan::ResolvedSpec resolved = plan::ResolvePlanSpec(stored, plan_path, input);
  if (resolved.from_working_directory)
    LogTo(&CliLogger(), LogLevel::kWarning,
          plan_path + ": " + plan::PlanInputName(input) + " '" + stored +
              "' is not beside the plan file; using it from the working directory (a plan "
              "written by an older hexplan; write it again to store the path relative to the "
              "plan)");
  return resolved.spec;
}

StatusOr<LoadedPlan> LoadPlanFile(const PlanFileArgs& args) {
  HX_ASSIGN_OR_RETURN(std::string text, ReadFileToString(args.path));
  HX_ASSIGN_OR_RETURN(plan::PlanHeader header, plan::ParsePlanHeader(text, args.path));
  const std::string model_spec =
      args.model.empty() ? PlanSpecToLoad(args.path, header.model.spec, plan::PlanInput::kModel)
                         : args.model;
  const std::string cluster_spec =
      args.cluster.empty()
          ? PlanSpecToLoad(args.path, header.cluster.spec, plan::PlanInput::kCluster)
          : args.cluster;
  auto inputs =
      LoadPlanningInputs(model_spec, header.model.options, cluster_spec, args.profile, args.cost);
  if (!inputs.ok()) return inputs.status().WithContext(args.path);
  LoadedPlan loaded;
  loaded.inputs = std::move(inputs).value();
  HX_RETURN_IF_ERROR(CheckFingerprints(args, header, loaded.inputs, model_spec, cluster_spec));
  HX_ASSIGN_OR_RETURN(
      loaded.plan, plan::ParsePlan(text, args.path, *loaded.inputs.graph, *loaded.inputs.cluster));
  HX_RETURN_IF_ERROR(plan::CheckPlan(loaded.plan, *loaded.inputs.cost, args.path));
  return loaded;
}

StatusOr<LoadedPlan> LoadPlanForModel(const std::string& plan_path, const ModelArgs& model,
                                      const std::string& cluster) {
  HX_ASSIGN_OR_RETURN(std::string text, ReadFileToString(plan_path));
  HX_ASSIGN_OR_RETURN(plan::PlanHeader header, plan::ParsePlanHeader(text, plan_path));
  const std::string cluster_spec =
      cluster.empty() ? PlanSpecToLoad(plan_path, header.cluster.spec, plan::PlanInput::kCluster)
                      : cluster;
  LoadedPlan loaded;
  HX_ASSIGN_OR_RETURN(loaded.inputs, LoadPlanningInputs(model, cluster_spec));
  const graph::Graph& graph = *loaded.inputs.graph;
  for (const plan::PlanMismatch& m : plan::FindPlanMismatches(
           header, graph, *loaded.inputs.cluster, {.cluster_overridden = !cluster.empty()})) {
    const std::string msg =
        m.input == plan::PlanInput::kModel
            ? plan_path + ": the plan was made for model '" + header.model.spec + "' (" +
                  header.model.name + "; " + OptionsText(header.model.options) + "), not for '" +
                  model.model + "' with these options (fingerprint mismatch)"
            : plan_path + ": the plan was made for cluster '" + header.cluster.spec + "', not '" +
                  cluster_spec + "' as built here (fingerprint mismatch)";
    if (!m.tolerated) return InvalidArgument(msg);
    LogTo(&CliLogger(), LogLevel::kWarning, msg);
  }
  HX_ASSIGN_OR_RETURN(loaded.plan, plan::ParsePlan(text, plan_path, graph, *loaded.inputs.cluster));
  return loaded;
}

}  // namespace hx::cli

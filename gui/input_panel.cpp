#include "gui/input_panel.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QStyle>
#include <QVBoxLayout>

#include "hardware/cluster.hpp"
#include "model/model_math.hpp"
#include "model/model_spec.hpp"
#include "strategies/training_config.hpp"

namespace infraplan::gui {

namespace {

QStringList qlist(const std::vector<std::string>& v) {
  QStringList out;
  for (const auto& s : v) out << QString::fromStdString(s);
  return out;
}

QComboBox* combo(const QStringList& items, bool editable = false) {
  auto* c = new QComboBox;
  c->addItems(items);
  c->setEditable(editable);
  return c;
}

void set_combo(QComboBox* c, const std::string& value) {
  const QString v = QString::fromStdString(value);
  const int i = c->findText(v);
  if (i >= 0) {
    c->setCurrentIndex(i);
  } else if (c->isEditable()) {
    c->setEditText(v);
  } else {
    c->addItem(v);  // a value the list lacks still round-trips; validation judges it
    c->setCurrentIndex(c->count() - 1);
  }
}

std::string text_of(const QComboBox* c) { return c->currentText().trimmed().toStdString(); }

}  // namespace

QSpinBox* InputPanel::spin(const QString& key, int lo, int hi, int value, const QString& special) {
  auto* s = new QSpinBox;
  s->setRange(lo, hi);
  s->setValue(value);
  if (!special.isEmpty()) s->setSpecialValueText(special);
  s->setAccelerated(true);
  fields_.insert(key, s);
  connect(s, &QSpinBox::valueChanged, this, &InputPanel::emitChanged);
  return s;
}

QDoubleSpinBox* InputPanel::dspin(const QString& key, double hi, double value, const QString& special) {
  auto* s = new QDoubleSpinBox;
  s->setRange(0, hi);
  s->setDecimals(2);
  s->setValue(value);
  s->setSpecialValueText(special);
  fields_.insert(key, s);
  connect(s, &QDoubleSpinBox::valueChanged, this, &InputPanel::emitChanged);
  return s;
}

InputPanel::InputPanel(QWidget* parent) : QWidget(parent) {
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(6, 6, 6, 6);

  auto* scenario_box = new QGroupBox("Scenario");
  auto* f = new QFormLayout(scenario_box);
  job_ = combo({"Training", "Serving"});
  f->addRow("Job", job_);
  model_ = combo(qlist(model::preset_names()), true);
  model_->setToolTip("A model preset, or the path of a Hugging Face config.json (File > Open model config)");
  fields_.insert("model", model_);
  f->addRow("Model", model_);
  model_from_base_ = new QCheckBox("use the scenario file's inline model");
  model_from_base_->setVisible(false);
  f->addRow("", model_from_base_);
  cluster_ = combo(qlist(hw::cluster_preset_names()));
  fields_.insert("cluster", cluster_);
  f->addRow("Cluster", cluster_);
  cluster_from_base_ = new QCheckBox("use the scenario file's cluster as written");
  cluster_from_base_->setVisible(false);
  f->addRow("", cluster_from_base_);
  nodes_ = spin("cluster.nodes", 1, 100000, 1);
  f->addRow("Nodes", nodes_);
  gpus_per_node_ = spin("cluster.gpus_per_node", 1, 64, 8);
  f->addRow("GPUs per node", gpus_per_node_);
  outer->addWidget(scenario_box);

  training_box_ = new QGroupBox("Training layout");
  auto* t = new QFormLayout(training_box_);
  t_tp_ = spin("training.tp", 1, 1024, 1);
  t_pp_ = spin("training.pp", 1, 1024, 1);
  t_dp_ = spin("training.dp", 0, 1000000, 0, "auto");
  t_cp_ = spin("training.cp", 1, 1024, 1);
  t_ep_ = spin("training.ep", 1, 1024, 1);
  t_zero_ = spin("training.zero", 0, 3, 0);
  t_sp_ = new QCheckBox("sequence parallel");
  fields_.insert("training.sp", t_sp_);
  t_micro_ = spin("training.micro_batch", 1, 1000000, 1);
  t_global_ = spin("training.global_batch", 0, 100000000, 0, "auto");
  t_seq_ = spin("training.seq_len", 1, 10000000, 4096);
  t_recompute_ = combo(qlist(model::recompute_names()));
  t_schedule_ = combo({"1f1b", "gpipe", "interleaved", "zb-h1", "dualpipe"});
  t_precision_ = combo(qlist(strat::precision_names()));
  fields_.insert("training.recompute", t_recompute_);
  fields_.insert("training.pp_schedule", t_schedule_);
  fields_.insert("training.precision", t_precision_);
  t->addRow("TP", t_tp_);
  t->addRow("PP", t_pp_);
  t->addRow("DP", t_dp_);
  t->addRow("CP", t_cp_);
  t->addRow("EP", t_ep_);
  t->addRow("", t_sp_);
  t->addRow("ZeRO stage", t_zero_);
  t->addRow("Micro-batch", t_micro_);
  t->addRow("Global batch", t_global_);
  t->addRow("Sequence length", t_seq_);
  t->addRow("Recompute", t_recompute_);
  t->addRow("PP schedule", t_schedule_);
  t->addRow("Precision", t_precision_);
  outer->addWidget(training_box_);

  serving_box_ = new QGroupBox("Serving deployment");
  auto* s = new QFormLayout(serving_box_);
  s_replicas_ = spin("serving.replicas", 1, 100000, 1);
  s_tp_ = spin("serving.tp", 1, 1024, 1);
  s_weights_ = combo({"bf16", "fp16", "fp8", "int8", "int4", "nvfp4"});
  s_kv_ = combo({"bf16", "fp16", "fp8", "int8", "int4"});
  fields_.insert("serving.weights", s_weights_);
  fields_.insert("serving.kv_dtype", s_kv_);
  s_batch_ = spin("batch", 1, 1000000, 64);
  s_context_ = spin("context", 1, 10000000, 4096);
  s->addRow("Replicas", s_replicas_);
  s->addRow("TP", s_tp_);
  s->addRow("Weights", s_weights_);
  s->addRow("KV cache", s_kv_);
  s->addRow("Batch (memory)", s_batch_);
  s->addRow("Context (memory)", s_context_);
  outer->addWidget(serving_box_);

  workload_box_ = new QGroupBox("Workload (serving simulation)");
  auto* w = new QFormLayout(workload_box_);
  w_requests_ = spin("workload.requests", 1, 1000000, 200);
  w_rate_ = dspin("workload.arrival", 1e6, 8, "all at t=0");
  w_ttft_ = dspin("workload.slo.ttft_ms", 1e7, 1000, "none");
  w_tpot_ = dspin("workload.slo.tpot_ms", 1e6, 50, "none");
  w_prompt_ = spin("workload.prompt_tokens", 1, 10000000, 1024);
  w_output_ = spin("workload.output_tokens", 1, 10000000, 256);
  workload_note_ = new QLabel("The scenario's workload (several classes or a trace) is used as written.");
  workload_note_->setWordWrap(true);
  workload_note_->setVisible(false);
  w->addRow("Requests", w_requests_);
  w->addRow("Arrivals per second", w_rate_);
  w->addRow("Prompt tokens (mean)", w_prompt_);
  w->addRow("Output tokens (mean)", w_output_);
  w->addRow(workload_note_);
  w->addRow("TTFT SLO (ms)", w_ttft_);
  w->addRow("TPOT SLO (ms)", w_tpot_);
  outer->addWidget(workload_box_);

  error_ = new QLabel;
  error_->setObjectName("validationError");
  error_->setWordWrap(true);
  error_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  error_->setStyleSheet(
      "QLabel { color: #b71c1c; background: #fdecea; border: 1px solid #f5c6c6; padding: 4px; }");
  error_->setVisible(false);
  outer->addWidget(error_);

  run_ = new QPushButton("Run simulation");
  run_->setToolTip("Memory updates as you type; this runs the training or serving simulation");
  outer->addWidget(run_);
  plan_ = new QPushButton("Plan: search layouts");
  plan_->setToolTip(
      "Training: every layout of this model on this cluster for this batch, ranked.\n"
      "Serving: deployments on this cluster's GPUs, judged by simulated goodput under the SLOs.");
  outer->addWidget(plan_);
  outer->addStretch(1);

  for (auto* c : {job_, model_, cluster_, t_recompute_, t_schedule_, t_precision_, s_weights_, s_kv_})
    connect(c, &QComboBox::currentTextChanged, this, &InputPanel::emitChanged);
  connect(t_sp_, &QCheckBox::toggled, this, &InputPanel::emitChanged);
  connect(model_from_base_, &QCheckBox::toggled, this, &InputPanel::emitChanged);
  connect(cluster_from_base_, &QCheckBox::toggled, this, &InputPanel::emitChanged);
  connect(job_, &QComboBox::currentIndexChanged, this, &InputPanel::updateJobVisibility);
  connect(cluster_, &QComboBox::currentTextChanged, this, &InputPanel::onClusterPresetChanged);
  connect(run_, &QPushButton::clicked, this, &InputPanel::runRequested);
  connect(plan_, &QPushButton::clicked, this, &InputPanel::planRequested);
  setInputs(Inputs{});  // the documented defaults (llama2-7b on one DGX A100)
}

void InputPanel::emitChanged() {
  if (!filling_) emit changed();
}

void InputPanel::updateJobVisibility() {
  const bool training = job_->currentIndex() == 0;
  training_box_->setVisible(training);
  serving_box_->setVisible(!training);
  workload_box_->setVisible(!training);
}

void InputPanel::onClusterPresetChanged() {
  if (filling_) return;
  try {  // a preset's own GPUs per node become the default
    const auto c = hw::cluster_preset(text_of(cluster_), 1);
    const bool was = filling_;
    filling_ = true;
    gpus_per_node_->setValue(c.gpus_per_node);
    filling_ = was;
  } catch (const std::exception&) {
    // Unknown names are reported by validation when the scenario is evaluated.
  }
}

Inputs InputPanel::inputs() const {
  Inputs in;
  in.job = job_->currentIndex() == 0 ? Job::Training : Job::Serving;
  in.model = text_of(model_);
  in.model_from_base = !model_from_base_->isHidden() && model_from_base_->isChecked();
  in.cluster = text_of(cluster_);
  in.cluster_from_base = !cluster_from_base_->isHidden() && cluster_from_base_->isChecked();
  in.nodes = nodes_->value();
  in.gpus_per_node = gpus_per_node_->value();
  auto& t = in.training;
  t.tp = t_tp_->value(), t.pp = t_pp_->value(), t.dp = t_dp_->value(), t.cp = t_cp_->value(),
  t.ep = t_ep_->value();
  t.sp = t_sp_->isChecked(), t.zero = t_zero_->value();
  t.micro_batch = t_micro_->value(), t.global_batch = t_global_->value(), t.seq_len = t_seq_->value();
  t.recompute = text_of(t_recompute_), t.pp_schedule = text_of(t_schedule_),
  t.precision = text_of(t_precision_);
  auto& s = in.serving;
  s.replicas = s_replicas_->value(), s.tp = s_tp_->value();
  s.weights = text_of(s_weights_), s.kv_dtype = text_of(s_kv_);
  s.batch = s_batch_->value(), s.context = s_context_->value();
  s.requests = w_requests_->value(), s.rate_per_s = w_rate_->value();
  s.prompt_tokens = w_prompt_->value(), s.output_tokens = w_output_->value();
  s.slo_ttft_ms = w_ttft_->value(), s.slo_tpot_ms = w_tpot_->value();
  s.workload_from_scenario = workload_from_scenario_;
  in.base = base_;
  in.base_dir = base_dir_;
  in.origin = origin_;
  return in;
}

void InputPanel::setInputs(const Inputs& in) {
  filling_ = true;
  job_->setCurrentIndex(in.job == Job::Training ? 0 : 1);
  set_combo(model_, in.model);
  model_from_base_->setVisible(in.model_from_base);
  model_from_base_->setChecked(in.model_from_base);
  set_combo(cluster_, in.cluster);
  cluster_from_base_->setVisible(in.cluster_from_base);
  cluster_from_base_->setChecked(in.cluster_from_base);
  nodes_->setValue(in.nodes);
  gpus_per_node_->setValue(in.gpus_per_node);
  const auto& t = in.training;
  t_tp_->setValue(t.tp), t_pp_->setValue(t.pp), t_dp_->setValue(t.dp), t_cp_->setValue(t.cp),
      t_ep_->setValue(t.ep);
  t_sp_->setChecked(t.sp), t_zero_->setValue(t.zero);
  t_micro_->setValue(int(t.micro_batch)), t_global_->setValue(int(t.global_batch)),
      t_seq_->setValue(int(t.seq_len));
  set_combo(t_recompute_, t.recompute), set_combo(t_schedule_, t.pp_schedule),
      set_combo(t_precision_, t.precision);
  const auto& s = in.serving;
  s_replicas_->setValue(s.replicas), s_tp_->setValue(s.tp);
  set_combo(s_weights_, s.weights), set_combo(s_kv_, s.kv_dtype);
  s_batch_->setValue(int(s.batch)), s_context_->setValue(int(s.context));
  w_requests_->setValue(int(s.requests)), w_rate_->setValue(s.rate_per_s);
  w_prompt_->setValue(int(s.prompt_tokens)), w_output_->setValue(int(s.output_tokens));
  w_ttft_->setValue(s.slo_ttft_ms), w_tpot_->setValue(s.slo_tpot_ms);
  workload_from_scenario_ = s.workload_from_scenario;
  for (QWidget* wdg : {static_cast<QWidget*>(w_requests_), static_cast<QWidget*>(w_rate_),
                       static_cast<QWidget*>(w_prompt_), static_cast<QWidget*>(w_output_)})
    wdg->setEnabled(!workload_from_scenario_);
  workload_note_->setVisible(workload_from_scenario_);
  base_ = in.base;
  base_dir_ = in.base_dir;
  origin_ = in.origin;
  filling_ = false;
  updateJobVisibility();
}

void InputPanel::showError(const QString& message) {
  if (auto* old = fields_.value(invalid_field_, nullptr)) {
    old->setStyleSheet({});
    old->setToolTip({});
  }
  invalid_field_.clear();
  error_->setText(message);
  error_->setVisible(!message.isEmpty());
  if (message.isEmpty()) return;
  // The longest key the message names ("training.tp=3 does not divide …" → "training.tp").
  for (auto it = fields_.cbegin(); it != fields_.cend(); ++it) {
    const QString& key = it.key();
    int at = message.indexOf(key);
    while (at >= 0) {
      const int end = at + int(key.size());
      const bool starts = at == 0 || !(message[at - 1].isLetterOrNumber() || message[at - 1] == '_');
      const bool ends = end >= message.size() || !(message[end].isLetterOrNumber() || message[end] == '_');
      if (starts && ends && key.size() > invalid_field_.size()) invalid_field_ = key;
      at = message.indexOf(key, at + 1);
    }
  }
  if (auto* w = fields_.value(invalid_field_, nullptr)) {
    w->setStyleSheet("border: 2px solid #c62828;");
    w->setToolTip(message);
  }
}

QString InputPanel::errorText() const { return error_->isHidden() ? QString() : error_->text(); }

}  // namespace infraplan::gui

#pragma once
// InputPanel: the left side of the planner window. One form for the scenario (model, cluster,
// training layout, serving deployment and workload), a line for validation errors under it, and
// the Run button. It only edits Inputs; the window decides what to compute.
#include <QMap>
#include <QWidget>

#include "gui/inputs.hpp"

QT_BEGIN_NAMESPACE
class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QGroupBox;
class QLabel;
class QPushButton;
class QSpinBox;
QT_END_NAMESPACE

namespace infraplan::gui {

class InputPanel : public QWidget {
  Q_OBJECT

 public:
  explicit InputPanel(QWidget* parent = nullptr);

  /// The form's current values (with the scenario it was loaded from as `base`).
  Inputs inputs() const;
  /// Fills the form (signals are not emitted while filling).
  void setInputs(const Inputs& in);

  /// Shows a library error message under the form and marks the widget of the field it names
  /// ("training.tp=3 …" marks the TP box). An empty message clears both.
  void showError(const QString& message);
  /// The error text shown now (empty when none).
  QString errorText() const;
  /// The key of the field marked invalid now ("training.tp"), empty when none.
  QString invalidField() const { return invalid_field_; }

  /// The widget editing a scenario key ("training.tp", "serving.weights", "cluster.nodes"), or null.
  QWidget* fieldWidget(const QString& key) const { return fields_.value(key, nullptr); }

 signals:
  /// Any value changed by the user.
  void changed();
  /// The Run button was pressed.
  void runRequested();
  /// The Plan button was pressed.
  void planRequested();

 private:
  void updateJobVisibility();
  void onClusterPresetChanged();
  void emitChanged();
  QSpinBox* spin(const QString& key, int lo, int hi, int value, const QString& special = {});
  QDoubleSpinBox* dspin(const QString& key, double hi, double value, const QString& special);

  QComboBox* job_ = nullptr;
  QComboBox* model_ = nullptr;
  QCheckBox *model_from_base_ = nullptr, *cluster_from_base_ = nullptr;
  QComboBox* cluster_ = nullptr;
  QSpinBox *nodes_ = nullptr, *gpus_per_node_ = nullptr;
  QGroupBox *training_box_ = nullptr, *serving_box_ = nullptr, *workload_box_ = nullptr;
  QSpinBox *t_tp_ = nullptr, *t_pp_ = nullptr, *t_dp_ = nullptr, *t_cp_ = nullptr, *t_ep_ = nullptr,
           *t_zero_ = nullptr;
  QSpinBox *t_micro_ = nullptr, *t_global_ = nullptr, *t_seq_ = nullptr;
  QCheckBox* t_sp_ = nullptr;
  QComboBox *t_recompute_ = nullptr, *t_schedule_ = nullptr, *t_precision_ = nullptr;
  QSpinBox *s_replicas_ = nullptr, *s_tp_ = nullptr, *s_batch_ = nullptr, *s_context_ = nullptr;
  QComboBox *s_weights_ = nullptr, *s_kv_ = nullptr;
  QSpinBox *w_requests_ = nullptr, *w_prompt_ = nullptr, *w_output_ = nullptr;
  QDoubleSpinBox *w_rate_ = nullptr, *w_ttft_ = nullptr, *w_tpot_ = nullptr;
  QLabel* workload_note_ = nullptr;
  QLabel* error_ = nullptr;
  QPushButton *run_ = nullptr, *plan_ = nullptr;

  QMap<QString, QWidget*> fields_;  ///< scenario key → widget
  QString invalid_field_;
  Json base_;
  std::string base_dir_, origin_;
  bool workload_from_scenario_ = false;
  bool filling_ = false;
};

}  // namespace infraplan::gui

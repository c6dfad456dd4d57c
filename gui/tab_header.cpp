#include "gui/tab_header.hpp"

#include <QSplitter>

namespace infraplan::gui {

QLabel* add_headline(QVBoxLayout* layout, const char* object_name, const QString& text) {
  auto* label = new QLabel(text);
  label->setObjectName(object_name);
  label->setWordWrap(true);
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(label);
  return label;
}

QLabel* add_note(QVBoxLayout* layout, const QString& text) {
  auto* label = new QLabel(text);
  label->setStyleSheet("color: #555;");
  layout->addWidget(label);
  return label;
}

void set_note(QLabel* note, const QString& text) {
  note->setText(text);
  note->setVisible(!text.isEmpty());
}

void add_chart_pair(QVBoxLayout* layout, QChartView*& first, QChartView*& second, int top, int bottom) {
  auto* split = new QSplitter(Qt::Vertical);
  first = new QChartView;
  second = new QChartView;
  for (auto* v : {first, second}) {
    v->setRenderHint(QPainter::Antialiasing);
    v->setMinimumHeight(180);
    split->addWidget(v);
  }
  split->setStretchFactor(0, top);
  split->setStretchFactor(1, bottom);
  layout->addWidget(split, 1);
}

}  // namespace infraplan::gui

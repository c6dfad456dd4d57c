#include "gui/tab_header.hpp"

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

}  // namespace infraplan::gui

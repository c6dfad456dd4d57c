#pragma once
// The top of every result tab: a selectable headline (the numbers that matter) and a grey note
// (what to do next, or why there is nothing to show).
#include <QChartView>
#include <QLabel>
#include <QString>
#include <QVBoxLayout>

namespace infraplan::gui {

/// Adds a word-wrapped, selectable headline label named `object_name` to `layout` and returns it.
QLabel* add_headline(QVBoxLayout* layout, const char* object_name, const QString& text = {});
/// Adds the grey note label with `text` to `layout` and returns it.
QLabel* add_note(QVBoxLayout* layout, const QString& text);
/// Shows `text` in `note`, hiding the label when `text` is empty.
void set_note(QLabel* note, const QString& text);
/// Adds two antialiased chart views stacked in a vertical splitter (stretch `top`:`bottom`) that
/// takes the rest of `layout`; `first` and `second` receive the views.
void add_chart_pair(QVBoxLayout* layout, QChartView*& first, QChartView*& second, int top, int bottom);

}  // namespace infraplan::gui

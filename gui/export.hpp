#pragma once
// Saving results: JSON documents and chart images. Every write goes to a temporary file in the
// target directory that is renamed over the target only when complete (QSaveFile), so a failed
// export leaves the previous file, or nothing, never half a file.
#include <QByteArray>
#include <QString>

#include "common/json_util.hpp"

QT_BEGIN_NAMESPACE
class QWidget;
QT_END_NAMESPACE

namespace infraplan::gui {

/// Writes `bytes` to `path` atomically. On failure returns false and sets `error` to a message
/// naming the file and the reason.
bool save_bytes_atomic(const QString& path, const QByteArray& bytes, QString* error);

/// Writes `j` pretty-printed (2 spaces, trailing newline, as the CLI prints it).
bool save_json(const QString& path, const Json& j, QString* error);

/// Grabs `widget` (a chart view, or the whole window) and writes it as PNG.
bool save_widget_png(const QString& path, QWidget* widget, QString* error);

}  // namespace infraplan::gui

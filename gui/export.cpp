#include "gui/export.hpp"

#include <QBuffer>
#include <QPixmap>
#include <QSaveFile>
#include <QWidget>

namespace infraplan::gui {

bool save_bytes_atomic(const QString& path, const QByteArray& bytes, QString* error) {
  QSaveFile f(path);
  if (!f.open(QIODevice::WriteOnly)) {
    if (error) *error = QString("cannot write %1: %2").arg(path, f.errorString());
    return false;
  }
  if (f.write(bytes) != bytes.size()) {
    if (error) *error = QString("cannot write %1: %2").arg(path, f.errorString());
    f.cancelWriting();
    return false;
  }
  if (!f.commit()) {
    if (error) *error = QString("cannot write %1: %2").arg(path, f.errorString());
    return false;
  }
  return true;
}

bool save_json(const QString& path, const Json& j, QString* error) {
  const std::string text = j.dump(2) + "\n";
  return save_bytes_atomic(path, QByteArray(text.data(), qsizetype(text.size())), error);
}

bool save_widget_png(const QString& path, QWidget* widget, QString* error) {
  if (!widget) {
    if (error) *error = "nothing to export: no chart is shown";
    return false;
  }
  const QPixmap pixmap = widget->grab();
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  if (pixmap.isNull() || !pixmap.save(&buffer, "PNG")) {
    if (error) *error = QString("cannot encode %1 as PNG").arg(path);
    return false;
  }
  return save_bytes_atomic(path, bytes, error);
}

}  // namespace infraplan::gui

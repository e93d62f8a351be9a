// What the steering dock asks of ParaView itself: its Rewind Live Sources, and the
// plugin's Python module rewind_compare (the Compare action lives there, so that
// pvpython users and the dock share one implementation). GUI thread only; never throws.
#pragma once
#include <QString>
#include <QStringList>

class vtkSMSourceProxy;

namespace rwd::paraview {

/// The selected source if it is a Rewind Live Source, else the only Rewind Live Source
/// in the pipeline; nullptr (and `why`, one line) when there is none or several to choose from.
vtkSMSourceProxy* pick_live_source(QString& why);
/// Its name in the Pipeline Browser.
QString source_name(vtkSMSourceProxy* proxy);
/// The live source fetches again (its Refresh) and the views are rendered.
void refresh(vtkSMSourceProxy* proxy);
/// rewind_compare.FUNCTION(*args) in ParaView's Python (started if need be): its
/// answer, or "error: ..." when Python or the module cannot run it.
QString call_compare(const char* function, const QStringList& args);

}  // namespace rwd::paraview

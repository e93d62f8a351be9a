// pqRewindViewBehavior: how a Rewind source looks in a view without being asked (an
// auto-start interface). When a Rewind Run File's or Rewind Live Source's
// window is first shown in a view, it is coloured by velocity_magnitude with its scalar
// bar (unless something already colours it), and a 2-D case (flat in z) is shown as 2-D:
// the view's interaction mode 2D, the camera looking down z. Whenever the window is
// updated (a new time, a new window, Refresh, the steering panel's Follow) and when
// another array is picked, the colour range follows the data shown, unless the user
// locked the range (the colour map's "Never" rescale mode): for an array with
// statistics in the step (field data rewind_range_<array>: min and max over the
// non-solid cells of the grids shown, window_vtk.hpp; a file step's statistics, or the
// live state's ranges its compute ranks take, protocol 1.13), that range; else (no
// statistics, an older collector's live state, velocity_magnitude) ParaView's range of
// the data shown.
#pragma once
#include <QObject>

class pqDataRepresentation;
class pqRepresentation;
class pqView;

class pqRewindViewBehavior : public QObject {
 public:
  explicit pqRewindViewBehavior(QObject* parent = nullptr);
  ~pqRewindViewBehavior() override;
  void startup();
  void shutdown() {}

 private:
  void watch(pqView* view);
  void representationAdded(pqRepresentation* r);
  static void firstShow(pqDataRepresentation* repr);
  static void followRange(pqDataRepresentation* repr);
};

// Placeholder translation unit so that a layer with no sources yet still forms a library.
namespace hx {
int EmptyLayerAnchor() { return 0; }
}  // namespace hx
